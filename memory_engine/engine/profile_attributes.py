"""The dimensions of the user profile (the paper's long-term persona memory).

The profile is a set of entries, one per attribute. A single-valued attribute holds one current value:
a new value supersedes the old one (the old one stays in the entry's history). A multi-valued attribute
collects values: a new value is added beside the others unless it is already there.
"""

SINGLE_VALUED = (
    "name",
    "age",
    "gender",
    "location",
    "hometown",
    "occupation",
    "employer",
    "education",
    "relationship_status",
)

MULTI_VALUED = (
    "family",
    "pets",
    "hobbies",
    "interests",
    "likes",
    "dislikes",
    "goals",
    "skills",
    "languages",
    "health",
    "values",
    "personality",
)

PROFILE_ATTRIBUTES = SINGLE_VALUED + MULTI_VALUED


def is_multi_valued(attribute: str) -> bool:
    return attribute in MULTI_VALUED


# What a user typically says about each attribute, in the first person. Without an LLM that can
# paraphrase, a user's own statement is filed under the attribute whose examples it is closest to
# (long_term.profile_from_statements), so the profile holds the user's words, never invented ones.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "occupation": ("I work as a nurse.", "My job is in software engineering.", "I'm a teacher at a school."),
    "employer": ("I work at a hospital downtown.", "My company just promoted me."),
    "education": ("I'm studying psychology at university.", "I graduated from college last year."),
    "location": ("I live in Boston.", "I moved to a new city last month."),
    "hometown": ("I grew up in a small town.", "I'm originally from Sweden."),
    "relationship_status": ("I'm married.", "My boyfriend and I broke up.", "I've been single for a while."),
    "family": ("My husband and our three kids.", "I visited my mom and my sister.", "My grandma raised me."),
    "pets": ("I have a dog named Max.", "My cat sleeps all day.", "We adopted a puppy."),
    "hobbies": ("I love painting in my free time.", "I go hiking every weekend.", "I play the guitar."),
    "interests": ("I'm really into astronomy.", "I'm passionate about climate activism."),
    "likes": ("I love Italian food.", "My favorite book is Pride and Prejudice."),
    "dislikes": ("I hate crowded places.", "I can't stand spicy food."),
    "goals": ("I want to become a counselor.", "My dream is to open a bakery.", "I plan to run a marathon."),
    "skills": ("I can speak three languages.", "I'm good at fixing cars."),
    "health": ("I've been dealing with back pain.", "I started therapy for my anxiety."),
    "values": ("Family means everything to me.", "I believe in helping others."),
    "personality": ("I'm an introvert.", "I'm a very optimistic person."),
}
