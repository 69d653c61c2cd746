"""A synthetic but realistic conversation of any length, for growing a memory space in benchmarks.

One person talks to an assistant about their life: threads of a few turns on one subject (a dish they
cook, their dog, a trip, their sister's wedding...), hours or days apart, with people, places, times and
feelings drawn from varied vocabularies. There are 20 topics of 8 subjects each; a thread's subject is
its topic session, so a space grown from this stream has at most 160 active mid-term sessions (fewer
than the default capacity of 200), each holding every page ever said on its subject, as a long-lived
space whose sessions keep merging would.

Everything is deterministic for a seed and prefix-stable: the first N pages of a longer stream are the
N pages of a shorter one, so a space can grow 1k -> 10k -> 100k and embeddings can be cached by range.
No I/O, no network, no model.
"""

import random
import re
from dataclasses import dataclass

__all__ = ["TOPICS", "SyntheticPage", "synthetic_pages", "synthetic_queries"]

# Bump when the text changes in a way that must invalidate cached embeddings.
GENERATOR_VERSION = 1


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NAMES = _words(
    "Maya Ben Priya Tom Lucia Omar Hannah Diego Sofia Kenji Aisha Liam Grace Mateo Chloe Ravi Nora Jamal "
    "Elena Marcus Ingrid Tariq Zoe Felix Amara Lukas Rosa Ethan Mei Samuel Leila Oscar Fatima Hugo Clara "
    "Nikhil Isla Andre Yuki Theo Carmen Malik Freya Dmitri Ana Jonah Esme Kofi Ruby Arjun Vera Caleb Lena"
)
RELATIONS = (
    "sister",
    "brother",
    "mom",
    "dad",
    "best friend",
    "coworker",
    "neighbor",
    "cousin",
    "partner",
    "son",
    "daughter",
    "grandma",
    "grandpa",
    "boss",
    "roommate",
    "aunt",
    "uncle",
    "therapist",
    "old college friend",
    "mother-in-law",
)
WHEN = (
    "yesterday",
    "last weekend",
    "this morning",
    "on Saturday",
    "last night",
    "two days ago",
    "over the holidays",
    "last month",
    "earlier today",
    "on my lunch break",
    "on Sunday afternoon",
    "after work on Tuesday",
    "this week",
    "a few days ago",
    "on Friday evening",
    "in the spring",
    "right before the storm",
    "during the long weekend",
)
DAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
MONTHS = _words("January February March April May June July August September October November December")
CITIES = _words(
    "Lisbon Kyoto Oaxaca Reykjavik Chicago Nairobi Seville Hanoi Montreal Edinburgh Prague Melbourne "
    "Istanbul Vancouver Bogota Marrakesh Copenhagen Austin Seoul Dublin Santiago Helsinki Lima Accra"
)
PLACES = (
    "the park",
    "downtown",
    "my aunt's house",
    "the community center",
    "the library",
    "the lake",
    "the farmers market",
    "the old diner on Main Street",
    "the gym",
    "the beach",
    "my friend's backyard",
    "the office",
    "the train station",
    "the coffee shop around the corner",
    "the hospital cafeteria",
    "the garden center",
)
FEELINGS = (
    "excited",
    "nervous",
    "exhausted",
    "proud",
    "relieved",
    "a bit overwhelmed",
    "happy",
    "frustrated",
    "grateful",
    "anxious",
    "hopeful",
    "stressed",
    "calm",
    "motivated",
    "disappointed",
    "curious",
)
PRAISE = (
    "wonderful",
    "exciting",
    "like a lot of work",
    "really fun",
    "pretty stressful",
    "like a big step",
    "amazing",
    "tough but worth it",
    "lovely",
    "impressive",
)
NUMBERS = _words("two three four five six seven eight ten twelve fifteen twenty")

GENERIC_USER = (
    "I've been thinking a lot about {s} {when}.",
    "Quick update on {s}: it went better than I expected.",
    "{Name} asked me about {s} {when} and I didn't know what to say.",
    "Honestly I feel {feeling} about {s}.",
    "I spent {number} hours on {s} {when}.",
    "My {relation} thinks I should take a break from {s}.",
    "I finally told my {relation} about {s}.",
    "Can we talk about {s} again? Something came up {when}.",
    "{When} I realized {s} matters more to me than I admitted.",
    "I keep putting off {s}, and it's starting to bug me.",
    "Guess what happened with {s} {when}!",
    "I want to plan {s} better before {day}.",
)
GENERIC_ASSISTANT = (
    "That sounds {praise}! How did your {relation} react?",
    "It's normal to feel {feeling} about {s}.",
    "I remember you mentioned {s} before. What changed?",
    "Take it one step at a time; {s} will come together.",
    "Would it help to make a plan for {s} this {day}?",
    "Good for you. {Number} hours is a real commitment.",
    "I'm glad you shared that. What would make {s} easier right now?",
    "That must have been a surprise. Do you want to talk it through?",
    "You've put a lot of care into {s}, and it shows.",
    "Maybe {name} could help with {s} next time.",
)
GENERIC_QUESTIONS = (
    "What did I tell you about {s}?",
    "How did {s} go?",
    "When did I last mention {s}?",
    "What was I worried about with {s}?",
    "Did my {relation} help with {s}?",
    "What happened with {s} {when}?",
    "Remind me what I decided about {s}.",
    "Who did I talk to about {s}?",
)
OPEN_QUESTIONS = (
    "What do I usually do on weekends?",
    "Who is {name}?",
    "What have I been stressed about lately?",
    "What does my {relation} do for work?",
    "Which city did I want to visit?",
    "What made me {feeling} recently?",
    "What did I do in {month}?",
    "What hobbies have I picked up this year?",
    "What should I cook for my {relation}?",
    "How is my health these days?",
)


@dataclass(frozen=True)
class Topic:
    name: str
    subjects: tuple[str, ...]
    details: tuple[str, ...]  # topic-specific things that happen, in the past tense after "I"
    user: tuple[str, ...]
    assistant: tuple[str, ...]
    questions: tuple[str, ...]


def _topic(name, subjects, details, user, assistant, questions) -> Topic:
    return Topic(name, tuple(subjects), tuple(details), tuple(user), tuple(assistant), tuple(questions))


TOPICS: tuple[Topic, ...] = (
    _topic(
        "cooking",
        [
            "the sourdough bread",
            "the vegetable lasagna",
            "my chicken curry",
            "the homemade ramen",
            "the banana pancakes",
            "the mushroom risotto",
            "the beef tacos",
            "the lemon cheesecake",
        ],
        [
            "added way too much garlic",
            "used fresh basil from the garden",
            "burned the bottom of the pan",
            "followed my grandma's handwritten recipe",
            "doubled the recipe for the potluck",
            "swapped the butter for olive oil",
            "let the dough rise overnight",
            "forgot the salt entirely",
        ],
        [
            "I made {s} for {name} {when} and {d}.",
            "{When} I {d} while making {s}.",
            "Do you think {s} would work with smoked paprika?",
            "My {relation} wants the recipe for {s}.",
        ],
        [
            "A pinch of salt at the end usually rescues {s}.",
            "For {s}, try roasting the vegetables first for more flavour.",
            "Cooking for {name} is a lovely way to spend an evening.",
        ],
        ["What went wrong with {s}?", "Who did I cook {s} for?"],
    ),
    _topic(
        "pets",
        [
            "my dog Biscuit",
            "my cat Luna",
            "our parrot Kiwi",
            "the new puppy",
            "my rabbit Clover",
            "the aquarium fish",
            "my old dog Max",
            "the foster kitten",
        ],
        [
            "took them to the vet for a checkup",
            "found them chewing my sneakers",
            "bought a new harness",
            "started obedience training",
            "noticed they were limping",
            "let them sleep on the couch",
            "walked them along the river",
            "switched to grain-free food",
        ],
        [
            "{When} I {d}, poor {s}.",
            "{S} hid under the bed during the fireworks.",
            "The vet said {s} needs to lose a little weight.",
            "{Name} offered to watch {s} while I'm away.",
        ],
        [
            "Pets pick up on our moods; {s} probably just needs routine.",
            "Regular walks help a lot with an anxious animal.",
            "It's kind of {name} to look after {s}.",
        ],
        ["What did the vet say about {s}?", "Who watched {s} while I was away?"],
    ),
    _topic(
        "travel",
        [
            "the trip to Lisbon",
            "the Kyoto trip",
            "our road trip along the coast",
            "the camping trip to Yosemite",
            "the weekend in Chicago",
            "the flight to Mexico City",
            "the cruise to Alaska",
            "the backpacking trip in Peru",
        ],
        [
            "booked the hotel near the old town",
            "lost my passport at the airport",
            "missed the connecting train",
            "found a tiny restaurant with amazing seafood",
            "got a sunburn on the first day",
            "packed far too many shoes",
            "learned a few phrases of the language",
            "took a thousand photos of the sunset",
        ],
        [
            "For {s}, I {d}.",
            "We're leaving for {s} in {month}, and I'm {feeling}.",
            "{Name} recommended a guide for {s}.",
            "I still can't believe I {d} on {s}.",
        ],
        [
            "Keep a copy of your documents in your email when you travel.",
            "{S} sounds unforgettable; what was the highlight?",
            "Travelling in {month} can be quieter and cheaper.",
        ],
        ["Where did I go on {s}?", "What went wrong on {s}?"],
    ),
    _topic(
        "work",
        [
            "the big presentation",
            "my new manager",
            "the quarterly deadline",
            "the job interview",
            "the team offsite",
            "my promotion review",
            "the night shifts",
            "the client project",
        ],
        [
            "stayed late to finish the slides",
            "got praised in the all-hands meeting",
            "argued with a colleague about the budget",
            "asked for more responsibility",
            "missed an important email",
            "mentored the new intern",
            "negotiated a raise",
            "worked through the whole weekend",
        ],
        [
            "About {s}: {when} I {d}.",
            "{S} is draining me, I {d}.",
            "My {relation} says I should ask for help with {s}.",
            "I'm {feeling} about {s} on {day}.",
        ],
        [
            "Setting boundaries at work is hard but it pays off.",
            "You prepared well for {s}; trust that.",
            "Could you talk to your manager about the workload?",
        ],
        ["How did {s} turn out?", "What did I do at work before {s}?"],
    ),
    _topic(
        "crafts",
        [
            "my pottery class",
            "the watercolor painting",
            "the knitting project",
            "my photography",
            "the woodworking bench",
            "my calligraphy practice",
            "the sketchbook",
            "the clay sculpture",
        ],
        [
            "finished a piece I'm actually proud of",
            "cracked a bowl in the kiln",
            "bought new brushes",
            "entered a local art show",
            "tried a new glaze",
            "sold my first piece online",
            "taught {name} the basics",
            "started over from scratch",
        ],
        [
            "In {s} {when} I {d}.",
            "{S} relaxes me more than anything else.",
            "I want to show {s} to my {relation}.",
            "Is it silly that {s} makes me so {feeling}?",
        ],
        [
            "Creative hobbies are a great way to unwind.",
            "Not silly at all; {s} clearly means a lot to you.",
            "An art show is a brave step; congratulations!",
        ],
        ["What did I make in {s}?", "Did I sell anything from {s}?"],
    ),
    _topic(
        "music",
        [
            "my guitar lessons",
            "the piano recital",
            "the jazz concert",
            "my band's rehearsal",
            "the violin",
            "the community choir",
            "my vinyl collection",
            "the summer music festival",
        ],
        [
            "learned a new chord progression",
            "played in front of an audience",
            "broke a string halfway through",
            "found a rare record at a thrift shop",
            "practised scales for an hour",
            "wrote my first song",
            "lost my voice before the show",
            "met the drummer after the set",
        ],
        [
            "With {s}, {when} I {d}.",
            "{S} is the best part of my week.",
            "{Name} and I are going to {s} together.",
            "My {relation} came to hear {s}.",
        ],
        [
            "Music is such a good outlet. What are you practising?",
            "Playing in front of people gets easier every time.",
            "{S} sounds like a blast.",
        ],
        ["What song did I play at {s}?", "Who came with me to {s}?"],
    ),
    _topic(
        "fitness",
        [
            "my marathon training",
            "the yoga class",
            "swimming laps",
            "the cycling club",
            "rock climbing",
            "the soccer league",
            "weightlifting",
            "my morning runs",
        ],
        [
            "ran a personal best",
            "pulled a muscle in my calf",
            "signed up for a race in {month}",
            "joined a new gym",
            "skipped three sessions in a row",
            "bought new running shoes",
            "hiked up the hill without stopping",
            "did my first full pull-up",
        ],
        [
            "{When} I {d} during {s}.",
            "{S} keeps me sane, honestly.",
            "{Name} wants to join me for {s}.",
            "I'm {feeling} about {s} since I {d}.",
        ],
        [
            "Rest days matter as much as training days.",
            "A personal best is a big deal; well done!",
            "Stretch before {s} to avoid injuries.",
        ],
        ["What race did I sign up for?", "Did I get injured during {s}?"],
    ),
    _topic(
        "reading",
        [
            "the mystery novel",
            "my book club",
            "the fantasy series",
            "the poetry collection",
            "the biography of Marie Curie",
            "the sci-fi trilogy",
            "the old cookbook",
            "the history book about Rome",
        ],
        [
            "stayed up until two finishing a chapter",
            "guessed the twist early",
            "lent my copy to {name}",
            "started annotating the margins",
            "listened to the audiobook on my commute",
            "cried at the ending",
            "bought the sequel",
            "hosted the discussion at my place",
        ],
        [
            "About {s}: {when} I {d}.",
            "{S} reminded me of my {relation}.",
            "{Name} recommended {s} to me.",
            "I'm {feeling} about finishing {s}.",
        ],
        [
            "Books that make us cry tend to stay with us.",
            "Who is your favourite character in {s}?",
            "A reading routine on the commute is a great idea.",
        ],
        ["Who recommended {s}?", "What did I think of {s}?"],
    ),
    _topic(
        "family",
        [
            "my sister's wedding",
            "my nephew's birthday",
            "my parents' anniversary",
            "the family reunion",
            "my grandma's health",
            "my brother's new baby",
            "my cousin's graduation",
            "my dad's retirement",
        ],
        [
            "gave a speech that made everyone laugh",
            "helped plan the decorations",
            "drove six hours to be there",
            "found old photo albums in the attic",
            "argued with my mom about the seating",
            "bought a gift at the last minute",
            "cooked dinner for twenty people",
            "stayed at the hospital overnight",
        ],
        [
            "For {s}, I {d}.",
            "{S} is on {day} and I'm {feeling}.",
            "{When} we talked about {s} for hours.",
            "My {relation} cried at {s}.",
        ],
        [
            "Family events bring up a lot of feelings.",
            "{S} sounds {praise}.",
            "It's lovely that you were there for {s}.",
        ],
        ["What did I do for {s}?", "When is {s}?"],
    ),
    _topic(
        "health",
        [
            "my back pain",
            "the allergy season",
            "my sleep schedule",
            "the dentist appointment",
            "my knee injury",
            "the therapy sessions",
            "the flu",
            "my migraines",
        ],
        [
            "saw a specialist",
            "started physical therapy",
            "cut back on coffee",
            "tried a meditation app",
            "got new medication",
            "slept nine hours for once",
            "missed work because of it",
            "changed my diet",
        ],
        [
            "About {s}: {when} I {d}.",
            "{S} has been worse since {month}.",
            "My {relation} keeps asking about {s}.",
            "I'm {feeling} because of {s}.",
        ],
        [
            "I'm sorry to hear that. Has the doctor suggested anything?",
            "Small changes to your routine can help with {s}.",
            "Please rest; {s} needs time.",
        ],
        ["What did the doctor say about {s}?", "Since when have I had {s}?"],
    ),
    _topic(
        "home",
        [
            "the kitchen renovation",
            "the new apartment",
            "the garden beds",
            "the leaky roof",
            "the moving boxes",
            "the living room furniture",
            "the noisy neighbors",
            "the rent increase",
        ],
        [
            "painted the walls sage green",
            "called the landlord again",
            "planted tomatoes and peppers",
            "assembled a bookshelf by myself",
            "found water damage behind the sink",
            "donated half my clothes",
            "hung the photos from {city}",
            "hired a contractor",
        ],
        [
            "With {s}, {when} I {d}.",
            "{S} is taking forever.",
            "{Name} helped with {s} on {day}.",
            "I'm {feeling} about {s}.",
        ],
        [
            "Home projects always take longer than planned.",
            "Sage green sounds calming for {s}.",
            "Document everything for the landlord.",
        ],
        ["Who helped with {s}?", "What colour did I paint the walls?"],
    ),
    _topic(
        "learning",
        [
            "my Spanish lessons",
            "the coding bootcamp",
            "my psychology degree",
            "learning Japanese",
            "the statistics exam",
            "the night classes in accounting",
            "the sign language course",
            "my thesis",
        ],
        [
            "passed the midterm",
            "practised with a language partner",
            "failed a quiz and felt awful",
            "finished a big assignment",
            "joined a study group",
            "talked to the professor",
            "made flashcards for every chapter",
            "presented my research",
        ],
        [
            "In {s}, I {d} {when}.",
            "{S} is harder than I expected.",
            "My {relation} quizzes me for {s}.",
            "I feel {feeling} about {s}.",
        ],
        [
            "Spaced repetition works wonders for {s}.",
            "Passing is a big milestone. Well done!",
            "A study group keeps you accountable.",
        ],
        ["How did I do in {s}?", "Who helps me study for {s}?"],
    ),
    _topic(
        "money",
        [
            "the savings plan",
            "the used car",
            "the new laptop",
            "the credit card bill",
            "the budget spreadsheet",
            "the tax return",
            "the vacation fund",
            "the investment account",
        ],
        [
            "put aside two hundred dollars",
            "compared prices for a week",
            "got a refund",
            "overspent on takeout",
            "cancelled three subscriptions",
            "asked my {relation} for advice",
            "finally paid it off",
            "set up automatic transfers",
        ],
        [
            "About {s}: I {d}.",
            "{S} is stressing me out.",
            "{Name} thinks {s} is a smart move.",
            "{When} I looked at {s} again.",
        ],
        [
            "Automating savings takes the willpower out of it.",
            "Paying it off is a great feeling!",
            "A budget is a plan, not a punishment.",
        ],
        ["How much did I save for {s}?", "Did I pay off {s}?"],
    ),
    _topic(
        "screen",
        [
            "the ocean documentary",
            "the new detective show",
            "the horror movie marathon",
            "the animated film",
            "the cooking competition show",
            "the film festival",
            "the classic westerns",
            "the reality show",
        ],
        [
            "binged the whole season",
            "fell asleep halfway through",
            "guessed the killer in episode two",
            "went with {name}",
            "made popcorn and invited the neighbors",
            "watched it twice",
            "argued about the ending",
            "cried at the last scene",
        ],
        [
            "{When} I {d} of {s}.",
            "Have you heard of {s}? I'm obsessed.",
            "{S} was {praise}.",
            "My {relation} hated {s}.",
        ],
        ["What did you like most about {s}?", "Movie nights are a fun tradition."],
        ["What did I think of {s}?", "Who did I watch {s} with?"],
    ),
    _topic(
        "volunteering",
        [
            "the animal shelter",
            "the food bank",
            "the charity run",
            "the support group",
            "the beach cleanup",
            "the tutoring program",
            "the community garden",
            "the hospital volunteering",
        ],
        [
            "signed up for weekly shifts",
            "raised five hundred dollars",
            "met a family that moved from {city}",
            "organized the donation drive",
            "trained new volunteers",
            "shared my own story",
            "planted a row of sunflowers",
            "stayed after closing to help",
        ],
        [
            "At {s}, I {d} {when}.",
            "{S} gives me a sense of purpose.",
            "{Name} wants to join {s}.",
            "I'm {feeling} after {s}.",
        ],
        [
            "Helping others is so meaningful. How did it feel?",
            "Sharing your story takes courage.",
            "{S} is lucky to have you.",
        ],
        ["What do I do at {s}?", "How much did we raise at {s}?"],
    ),
    _topic(
        "friends",
        [
            "dinner with my best friend",
            "the argument with my roommate",
            "reconnecting with an old friend",
            "our game night",
            "the surprise party",
            "my friend's breakup",
            "the group chat drama",
            "the housewarming party",
        ],
        [
            "apologized first",
            "stayed up talking until midnight",
            "brought homemade cookies",
            "felt left out",
            "planned the whole evening",
            "laughed until I cried",
            "set a boundary",
            "invited {name}",
        ],
        [
            "After {s}, I {d}.",
            "{S} made me {feeling}.",
            "{Name} was at {s} too.",
            "{When} I kept thinking about {s}.",
        ],
        [
            "Friendships need care on both sides.",
            "Setting a boundary is healthy.",
            "{S} sounds {praise}.",
        ],
        ["What happened at {s}?", "Who was at {s}?"],
    ),
    _topic(
        "outdoors",
        [
            "the hiking trail by the lake",
            "my camping gear",
            "birdwatching",
            "the fishing trip",
            "the national park",
            "stargazing",
            "the kayak",
            "the mountain cabin",
        ],
        [
            "saw a heron up close",
            "got caught in the rain",
            "caught a huge trout",
            "forgot the tent poles",
            "watched a meteor shower",
            "hiked twelve miles",
            "paddled across the bay",
            "lit a campfire on the first try",
        ],
        [
            "On {s}, I {d}.",
            "{S} is my favourite escape.",
            "{Name} and I are planning {s} for {month}.",
            "{When} I {d}.",
        ],
        [
            "Being outdoors is so restorative.",
            "Always pack a rain layer for {s}.",
            "A meteor shower must have been magical.",
        ],
        ["What did I see on {s}?", "When are we going on {s}?"],
    ),
    _topic(
        "tech",
        [
            "my new phone",
            "the smart watch",
            "the home network",
            "the video game",
            "the 3D printer",
            "the photo backup",
            "the podcast I started",
            "my coding side project",
        ],
        [
            "lost a week of data",
            "finally fixed the bug",
            "printed a tiny dragon",
            "reached level fifty",
            "recorded an episode with {name}",
            "reset everything to factory settings",
            "tracked my sleep for a month",
            "spent hours on the setup",
        ],
        [
            "With {s}, I {d} {when}.",
            "{S} is driving me up the wall.",
            "My {relation} wants to try {s}.",
            "I'm {feeling} about {s}.",
        ],
        [
            "Back up first, then tinker.",
            "Fixing a stubborn bug is so satisfying.",
            "{S} sounds fun to play with.",
        ],
        ["What went wrong with {s}?", "Who recorded the podcast with me?"],
    ),
    _topic(
        "parenting",
        [
            "my daughter's school play",
            "my son's soccer practice",
            "the potty training",
            "the parent-teacher meeting",
            "the bedtime routine",
            "the science fair",
            "the summer camp",
            "the new babysitter",
        ],
        [
            "sewed a costume at midnight",
            "drove the carpool",
            "read three bedtime stories",
            "helped build a volcano",
            "met the other parents",
            "packed the lunch boxes",
            "cheered from the sidelines",
            "left a long list of instructions",
        ],
        [
            "For {s}, I {d}.",
            "{S} went {praise}.",
            "{Name} is helping with {s}.",
            "{When} I {d} for {s}.",
        ],
        [
            "Kids remember the effort you put in.",
            "Routines make evenings easier for everyone.",
            "{S} sounds {praise}.",
        ],
        ["What did I do for {s}?", "Who helps with {s}?"],
    ),
    _topic(
        "dreams",
        [
            "becoming a counselor",
            "opening a bakery",
            "going back to school",
            "moving abroad",
            "starting my own business",
            "switching to part-time",
            "applying to grad school",
            "writing a novel",
        ],
        [
            "researched programs for hours",
            "talked to someone who did it",
            "made a five-year plan",
            "saved the first thousand dollars",
            "told my {relation} about it",
            "wrote down my reasons",
            "visited {city} to look around",
            "sent in the application",
        ],
        [
            "About {s}: I {d}.",
            "I keep dreaming about {s}.",
            "{Name} thinks {s} suits me.",
            "I'm {feeling} about {s}.",
        ],
        [
            "{S} is a big dream, and you are taking real steps.",
            "What scares you most about {s}?",
            "Talking to someone who did it is a smart move.",
        ],
        ["What is my plan for {s}?", "Who did I tell about {s}?"],
    ),
)

_SLOTS: dict[str, tuple[str, ...]] = {
    "name": NAMES,
    "relation": RELATIONS,
    "when": WHEN,
    "day": DAYS,
    "month": MONTHS,
    "city": CITIES,
    "place": PLACES,
    "feeling": FEELINGS,
    "praise": PRAISE,
    "number": NUMBERS,
}
_SLOT_RE = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class SyntheticPage:
    user_input: str
    agent_response: str
    topic: str  # "travel/the Kyoto trip": the session the page belongs to
    thread: int  # thread number; a thread is a run of turns on one subject
    minutes: int  # minutes since the start of the conversation


def _fill(template: str, rng: random.Random, subject: str, topic: Topic, *, sentence: bool = True) -> str:
    """The template with its slots filled: {s} the subject, {d} a detail of the topic, the others drawn
    from the shared vocabularies; a capitalised slot name capitalises its value."""

    def slot(match: re.Match) -> str:
        key = match.group(1)
        lower = key.lower()
        if lower == "s":
            value = subject
        elif lower == "d":
            value = _fill(rng.choice(topic.details), rng, subject, topic, sentence=False)
        else:
            value = rng.choice(_SLOTS[lower])
        return value[0].upper() + value[1:] if key[0].isupper() else value

    text = _SLOT_RE.sub(slot, template)
    return text[0].upper() + text[1:] if sentence else text


def _side(rng: random.Random, topic: Topic, subject: str, specific: tuple[str, ...], generic: tuple[str, ...]) -> str:
    """One to three sentences of one speaker, never the same template twice."""
    sentences, used = [], set()
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        pool = specific if rng.random() < 0.6 else generic
        template = rng.choice(pool)
        if template not in used:
            used.add(template)
            sentences.append(_fill(template, rng, subject, topic))
    return " ".join(sentences)


def synthetic_pages(seed: int, count: int) -> list[SyntheticPage]:
    """The first `count` pages of the conversation made by `seed`. Pure; prefix-stable in `count`."""
    rng = random.Random(seed)
    pages: list[SyntheticPage] = []
    minutes = 0
    thread = 0
    while len(pages) < count:
        topic = rng.choice(TOPICS)
        subject = rng.choice(topic.subjects)
        # Threads are 35 minutes to 4 hours apart (beyond the 30 minutes within which a turn may continue
        # the one before): 100k pages span about five years.
        minutes += rng.randint(35, 240)
        for _ in range(rng.randint(2, 9)):
            user = _side(rng, topic, subject, topic.user, GENERIC_USER)
            assistant = _side(rng, topic, subject, topic.assistant, GENERIC_ASSISTANT)
            pages.append(SyntheticPage(user, assistant, f"{topic.name}/{subject}", thread, minutes))
            minutes += rng.randint(1, 4)
        thread += 1
    return pages[:count]


def synthetic_queries(seed: int, count: int) -> list[str]:
    """`count` varied questions a user might ask about their own life. Pure."""
    rng = random.Random(seed)
    queries = []
    for _ in range(count):
        topic = rng.choice(TOPICS)
        subject = rng.choice(topic.subjects)
        pool = rng.choice((topic.questions, GENERIC_QUESTIONS, OPEN_QUESTIONS))
        queries.append(_fill(rng.choice(pool), rng, subject, topic))
    return queries
