"""The word lists that reading a message rests on, as data: each list says what its words mark, and the
patterns of language/reading.py and engine/recall.py are built from them. A word added here is read the
same way by promotion, by quoting and by the answering path. All lower case, apostrophes straight.
"""

import re

# Chat spelling, as people type on a phone, and the word each stands for. Not "id" -> "i'd": "my ID
# number" is asked far more often than "id love to" is told.
CHAT_SPELLING = {
    "u": "you", "ur": "your", "r": "are", "whats": "what's", "wats": "what's", "wheres": "where's",
    "whens": "when's", "whos": "who's", "hows": "how's", "im": "i'm", "ive": "i've", "dont": "don't",
    "didnt": "didn't", "cant": "can't", "wat": "what", "wot": "what", "pls": "please", "plz": "please",
    "forgett": "forget", "delet": "delete", "abt": "about",
}  # fmt: skip

# A sentence with one of these speaks of the speaker ("I", "we": a couple's move is theirs too).
FIRST_PERSON = (
    "i", "i'm", "i've", "i'll", "i'd", "im", "me", "my", "mine", "myself",
    "we", "we're", "we've", "our", "ours", "us",
)  # fmt: skip
POSSESSIVE = ("my", "our")

# The words a question opens with.
WH_WORDS = (
    "what",
    "what's",
    "which",
    "who",
    "who's",
    "whose",
    "where",
    "where's",
    "when",
    "when's",
    "how",
    "how's",
    "why",
    "why's",
)
# The same in the languages people mix in, but those that are other words too ("que", "qui", "como", "che", "was"
# are "that", "like", "was"; "kya" asks yes or no too; language.plain reads "wat" as "what"): "¿cuál es mi talla?",
# "meri salary kitni batayi thi maine?".
WH_ELSEWHERE = (
    "qué", "cuál", "cuáles", "quién", "quiénes", "dónde", "cuándo", "cuánto", "cuánta", "cuántos", "cuántas",
    "qual", "quais", "quem", "onde", "quando", "quanto", "quanta", "quantos", "quantas", "o que",
    "quel", "quelle", "quels", "quelles", "où", "quand", "combien", "c'est quoi", "quoi",
    "quale", "quali", "chi", "dove", "quanti", "quante", "cosa", "che cosa",
    "wer", "wo", "wann", "wie", "welche", "welcher", "welches", "welchen", "wieviel", "wie viel", "wie viele",
    "waar", "wanneer", "welk", "welke", "hoeveel", "hoe",
    "co", "kto", "gdzie", "kiedy", "ile", "jak", "jaki", "jaka", "jakie", "który", "która", "które",
    "kab", "kahan", "kaun", "kitna", "kitni", "kitne", "kaunsa", "kaunsi",
    "ano", "anong", "sino", "saan", "kailan", "magkano", "ilan", "alin",
)  # fmt: skip
AUX_WORDS = (
    "do", "does", "did", "is", "are", "am", "was", "were", "have", "has", "had", "can", "could", "would", "will",
    "should", "shall", "tell me", "remind me", "any",
)  # fmt: skip
# What may come before a question's first word: "quick check: which city ...", "and the furball, what's ...".
FILLERS = (
    "and", "so", "but", "now", "wait", "ok", "okay", "btw", "also", "hey", "um", "hmm", "oh", "lol", "haha",
    "random", "quick check", "quick question",
)  # fmt: skip

# Nouns naming a value a person is asked for ("the dog's name", "exam date now pls").
WANTED_NOUNS = (
    "name", "date", "time", "year", "make", "model", "address", "city", "town", "area", "place", "number", "age",
    "birthday", "title",
)  # fmt: skip
VALUE_NOUNS = (
    *WANTED_NOUNS, "surname", "day", "postcode", "price", "cost", "rate", "rent", "sum", "total", "amount", "fee",
    "span", "size", "length", "height", "weight", "dose", "strength", "code", "reference", "extension", "ext",
)  # fmt: skip
# Words for a value a figure gives, in the languages people mix in: "forget the price from the offer" names "das
# Angebot liegt bei 1.380 Euro", "oublie le montant de mon loyer" names "mon loyer c'est 1 475 $".
FIGURE_WORDS = (
    "price", "cost", "rate", "rent", "sum", "total", "amount", "fee", "salary", "pay", "number", "figure",
    "preis", "kosten", "betrag", "summe", "gehalt", "nummer", "prix", "montant", "coût", "tarif", "salaire",
    "numéro", "precio", "costo", "coste", "importe", "monto", "salario", "sueldo", "número", "preço", "custo",
    "valor", "salário", "prezzo", "importo", "stipendio", "numero", "prijs", "bedrag", "salaris", "cena", "kwota",
    "pensja", "numer", "magkano", "presyo", "halaga",
)  # fmt: skip
# A medicine named by its kind ("forget the meds") is told by its dose ("the doc put me on methylphenidate 10mg").
MEDICINE_WORDS = (
    "med", "meds", "medication", "medicine", "pill", "tablet", "prescription", "drug", "medicamento", "remédio",
    "remedio", "médicament", "medikament", "tabletten", "farmaco", "pastiglie", "medicijn", "leki", "dawai", "gamot",
)  # fmt: skip

# Verbs that open a request in the imperative, in the languages people mix in ("redo the tile calc", "escríbeme un
# mensajito", "Schreiben Sie bitte", "gawa ka ng caption"): what follows is asked for, not told. Words that also
# open a statement ("change of plan", "update food cost went up", "work out most mornings", "fais du vélo") are not
# here.
IMPERATIVES = (
    "write", "rewrite", "redo", "re-do", "draft", "redraft", "make", "give", "tell", "list", "suggest",
    "recommend", "plan", "help", "find", "explain", "translate", "summarise", "summarize", "compose", "create",
    "send", "fix", "check", "show", "describe", "remind", "calculate", "figure out", "add", "put", "fill in",
    "fill out", "prepare", "edit", "format", "convert", "compare", "generate",
    "escribe", "escríbeme", "escribeme", "redacta", "hazme", "haz", "dime", "recuérdame", "recuerdame",
    "pon", "ponme", "prepara", "manda", "mándame", "dame", "ayúdame", "ayudame",
    "écris", "écrivez", "écris-moi", "rédige", "rédigez", "faites", "dis-moi", "rappelle-moi", "aide-moi",
    "schreib", "schreibe", "schreiben sie", "erstelle", "erstellen sie", "mach", "mache", "sag mir", "erinnere mich",
    "hilf mir", "formuliere", "formulieren sie",
    "escreve", "escreva", "faça", "redige", "redija", "diz-me", "lembra-me", "me lembra", "ajuda-me",
    "scrivi", "scrivimi", "fai", "fammi", "dimmi", "ricordami", "aiutami",
    "schrijf", "maak", "zeg", "herinner me",
    "napisz", "zrób", "przypomnij", "pomóż",
    "likho", "likh do", "bana do", "banao", "bata do", "batao",
    "gawa ka", "gawan mo", "pakisulat", "isulat mo", "paki-draft", "pakigawa",
)  # fmt: skip
# Things the person asks to have written, which may need something of theirs: "a gift tag for the kid's
# present, use her name", "babysitter note. kid's allergy.".
WRITTEN_THINGS = (
    "note", "text", "msg", "message", "email", "e-mail", "letter", "card", "caption", "post", "label", "sign", "memo",
    "reminder", "invite", "invitation", "entry", "bio", "headline", "signature", "form", "field", "box", "line",
    "verse", "toast", "speech", "list", "checklist", "tag", "poster", "review", "reply", "out-of-office",
    "instructions", "programme", "program", "wording", "lockscreen", "notice", "flyer", "announcement", "item",
)  # fmt: skip

# Words that say when.
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
)  # fmt: skip
TIME_WORDS = (
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon", "tue", "tues", "wed",
    "thu", "thurs", "fri", "sat", "sun", "today", "tonight", "tomorrow", "yesterday", "weekend", "week", "month",
    "year", "ago", "next", "last", "morning", "afternoon", "evening", "noon", "midnight", "christmas", "easter",
    "summer", "winter", "spring", "autumn", "fall", "birthday",
)  # fmt: skip
# Words that give a date, strictly: what a statement holds when it tells when something of theirs is
# (language/asked.py: "when is my wife's birthday" is given by "her birthday is on 3 May", not "last week").
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DATE_WORDS = (*MONTHS, *WEEKDAYS, "today", "tomorrow", "tonight", "weekend", "week", "month", "year", "next")
# Words that say how many.
NUMBER_WORDS = (
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty",
    "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "a couple", "a few", "several", "dozen",
    "twins", "triplets",
)  # fmt: skip

# Words that count, strictly: what a statement holds when it gives an age (language/asked.py).
COUNTING_WORDS = NUMBER_WORDS[: NUMBER_WORDS.index("hundred") + 1]

# Words a question uses to ask how things are now ("where do I live these days?").
NOW_WORDS = ("now", "these days", "currently", "at the moment", "anymore", "any more", "nowadays", "lately",
             "latest", "new", "still")  # fmt: skip

# Words of a question that say it is a question about memory, not what it is about.
ASKING_WORDS = (
    "remind", "remember", "recall", "told", "tell", "said", "say", "mention", "mentioned", "forgot", "forget",
    "name", "called", "named", "again", "know", "current", "currently", "now", "exactly", "actually", "kind",
    "sort", "nome", "nombre", "nom", "naam", "pangalan",
)  # fmt: skip

# Words for a relative: "my sister Ines" names her; "Mum" is no name, however it is written.
RELATIVES = (
    "husband", "wife", "partner", "spouse", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "fiancée",
    "son", "daughter", "kid", "child", "sister", "brother", "mom", "mum", "mother", "mama", "amma", "dad", "father",
    "papa", "grandma", "grandmother", "gran", "nana", "grandpa", "grandfather", "aunt", "uncle", "cousin", "niece",
    "nephew", "stepson", "stepdaughter", "twin",
)  # fmt: skip

# The commonest short words of the other languages people write in: in most of what a Spanish speaker says, so
# no sign that a statement answers a question in Spanish ("que", "mi"), however few of the statements hold them.
FUNCTION_WORDS = (
    "que", "qué", "el", "la", "los", "las", "lo", "le", "les", "de", "del", "en", "un", "una", "mi", "mis", "tu",
    "te", "se", "me", "es", "por", "para", "con", "si", "sí", "ya", "al", "os", "da", "do", "das", "dos", "na",
    "em", "um", "uma", "meu", "minha", "eu", "pra", "du", "des", "une", "et", "est", "je", "il", "elle", "mon",
    "ma", "mes", "ce", "ça", "qui", "di", "che", "mio", "mia", "der", "die", "das", "und", "ist", "ich", "ein",
    "eine", "mein", "meine", "zu", "mit", "ang", "ng", "sa", "ko", "mo", "ni", "yung", "ba", "po", "nga", "ka",
    "ki", "ke", "hai", "tha", "kya", "mera", "meri", "ne", "aur", "bhi", "chez", "bei", "beim", "dal", "dalla", "bij",
)  # fmt: skip

# Words that open a phrase leading into a clause ("For the VPN from home, IT gave me this token", "After the
# move, ..."): the phrase is part of the clause it opens.
OPENING_WORDS = (
    "for", "in", "at", "on", "after", "before", "with", "without", "during", "since", "from", "by", "about",
    "as", "regarding", "until", "despite", "because of", "due to", "thanks to", "according to", "apart from",
)  # fmt: skip

# Words telling that a date or a time was moved, in the languages people mix in: "standup moved to 9:15", "la
# segreteria ha spostato la visita al 10 aprile", "die Feier wurde verschoben".
MOVED_WORDS = (
    "moved", "postponed", "rescheduled", "brought forward", "pushed back", "changed", "switched", "spostato",
    "spostata", "rimandato", "rimandata", "verschoben", "verlegt", "reporté", "reportée", "pospuesto", "pospuesta",
    "aplazado", "aplazada", "adiado", "adiada", "remarcado", "remarcada", "verplaatst", "przesunięty",
    "przesunięta", "przełożony", "przełożona",
)  # fmt: skip
# Words that tell a value told before was wrong ("correction: twice a day", "oups typo, c'est l'apt 8",
# "Korrektur: Der Umzug findet jetzt am 10. Mai statt"): a change, as MOVED_WORDS are. Not "actually", "my bad"
# or "I meant", which as often tell something new ("actually my brother's birthday is on 3 June", "I meant to
# tell you, mum is turning 70").
CORRECTION_WORDS = (
    "correction", "corrected", "typo", "misread", "korrektur",
    "corrección", "correção", "correzione", "correctie", "poprawka", "mali pala",
)  # fmt: skip
# Words that set a value aside, before it: "Hanabusa, not Sakuraya", "Sonntag, nicht Samstag", "não Pipoca".
NEGATIONS = ("not", "no", "nicht", "kein", "keine", "pas", "non", "não", "nao", "nie", "niet", "nahi", "nahin",
             "instead of", "rather than")  # fmt: skip

# Languages and peoples, capitalised but naming no one ("my English is terrible", "any German podcasts?").
LANGUAGES = (
    "english", "british", "american", "german", "french", "spanish", "italian", "portuguese", "dutch", "polish",
    "swedish", "norwegian", "danish", "finnish", "russian", "ukrainian", "greek", "turkish", "arabic", "hebrew",
    "hindi", "urdu", "bengali", "chinese", "mandarin", "cantonese", "japanese", "korean", "vietnamese", "thai",
    "indonesian", "filipino", "tagalog", "swahili", "yoruba", "igbo", "zulu", "afrikaans", "irish", "scottish",
    "welsh", "european", "african", "asian", "latin", "christian", "muslim", "jewish",
)  # fmt: skip

# Capitalised, but naming no one (read in lower case): a sentence's "I", days, months, some languages,
# greetings and titles.
NOT_A_NAME = (
    "i", "i'm", "i've", "i'd", "i'll", "ok", *WEEKDAYS, *MONTHS[:12], "english", "french", "spanish", "german",
    "italian", "portuguese", "hello", "hi", "hey", "dear", "thanks", "please", "mr", "mrs", "ms", "dr",
)  # fmt: skip

# How a person gives their own name: "my name is Sam", "call me Tash", "I'm called Ines" (language/names.py,
# profile_attributes.py, and a model's reply that claims the name: replies.py).
NAMING_ONESELF = ("my name is", "my name's", "call me", "i'm called", "i am called")
# Words that name something, a name after them: "a cat called Pepper", "a Kenworth I call Big Sue".
NAMING_WORDS = ("called", "named", "name is", "name's", "name was", "names are", "names were", "i call", "we call",
                "goes by", "nicknamed")  # fmt: skip

# Words whose trailing period does not end a sentence ("Dr. Okafor", "e.g. a cat").
ABBREVIATIONS = (
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "approx", "dept", "est", "fig",
    "inc", "ltd", "co", "mt", "no", "vol", "cf", "al",
)  # fmt: skip


def alternation(words) -> str:
    """A regular expression matching any of `words` (longest first, so "what's" before "what"), as a
    group that captures nothing."""
    ordered = sorted(words, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in ordered) + ")"


# Asking the memory to forget (language/memory_requests.py), in the imperative: "forget my medicine", "oublie
# mon adresse", "borra lo que te dije", "meri ex ka naam delete kar do". KEEP_VERBS follow "don't", "stop", "no
# need to": "don't keep my ...".
FORGET_VERBS_ENGLISH = (
    "forget", "delete", "erase", "wipe", "remove", "scrub", "unlearn", "un-remember", "unremember", "purge",
    "expunge", "get rid of", "throw away", "clear", "drop",
)  # fmt: skip
FORGET_VERBS = (
    *FORGET_VERBS_ENGLISH,
    "oublie", "oubliez", "efface", "effacez", "effaces", "supprime", "supprimez", "supprimes",
    "olvida", "olvide", "olvídalo", "olvidalo", "olvídate de", "olvidate de", "borra", "borre", "bórralo", "elimina",
    "vergiss", "vergessen sie", "lösch", "lösche", "löschen", "löschen sie",
    "esquece", "esqueça", "esqueca", "apaga", "apague",
    "dimentica", "dimenticati", "cancella",
    "vergeet", "verwijder", "wis", "zapomnij", "usuń", "usun", "unut", "unutur musun", "sil",
    "bhool jao", "bhool jaana", "bhul jao", "bhool ja", "bhul ja", "delete kar do", "hata do", "mita do",
    "paki-forget", "pakiforget", "paki-delete", "pakidelete", "pakibura", "pakitanggal", "kalimutan mo",
    "lupakan", "lupain", "hapus", "hapuskan", "glöm", "radera", "glem", "slet", "slett", "sahau", "futa", "zapomeň",
    "smaž", "uită", "șterge", "kaydetme",
)  # fmt: skip
KEEP_VERBS = (
    "keep", "keeping", "remember", "remembering", "store", "storing", "save", "saving", "hold on to", "hold onto",
    "holding on to", "holding onto", "retain", "retaining", "record", "recording", "keep track of",
    "keeping track of", "hang on to", "hang onto", "guardes", "guardar", "yaad rakhna", "yaad mat rakhna",
)  # fmt: skip
# The words of the person's that own what follows: "my address", "meine Adresse", "o meu CPF".
OWNING_WORDS = (
    "my", "our", "mon", "ma", "mes", "notre", "mi", "mis", "nuestro", "nuestra", "mein", "meine", "meinen",
    "meiner", "meinem", "unser", "unsere", "meu", "minha", "meus", "minhas", "nosso", "nossa", "mio", "mia", "miei",
    "mie", "nostro", "nostra", "mijn", "onze", "mój", "moja", "moje", "mojego", "mojej", "moim", "nasz", "nasza",
    "mere", "meri", "mera",
)  # fmt: skip
# The words of a thing of the person's, or of something they told: "my", "where I live", "what I said about".
OWN_WORDS = (
    *OWNING_WORDS, "mine", "i", "i'm", "i've", "i'd", "me", "we", "us", "je", "j'ai", "moi", "yo", "te dije", "ich",
    "eu", "ik", "benim", "maine", "ko", "ako",
)  # fmt: skip
# Asking what the memory holds of the person: "what do you know about me?", "dump ur memory of me".
MEMORY_WORDS = (
    "know", "knows", "remember", "recall", "saved", "stored", "kept", "keeping", "retained", "hold", "holding",
    "memory", "memories", "info", "information", "informations", "data", "told you", "have", "got", "gardé", "gardées",
    "retenu",
    "sais", "weißt", "weisst", "sabes", "sai", "lembra", "ricordi", "weet", "wiesz", "biliyorsun", "yaad",
)  # fmt: skip
# A thing named by what the person told of it, in the languages people mix in: "quello che ti ho detto su Chiara",
# "lo que te conté de mi ex". (Rules read the words plain: language.plain makes Dutch "wat" "what".)
TOLD_ABOUT = (
    "what i told you about", "what i said about", "what i told you of", "what i mentioned about",
    "quello che ti ho detto su", "quello che ti ho detto di", "ciò che ti ho detto su",
    "quello che ti ho raccontato su", "quello che ti ho raccontato di", "lo que te dije de", "lo que te dije sobre",
    "lo que te conté de", "lo que te conté sobre", "ce que je t'ai dit sur", "ce que je t'ai dit de",
    "ce que je t'ai dit à propos de", "ce que je t'ai raconté sur", "o que te disse sobre", "o que eu disse sobre",
    "o que te contei sobre", "o que te falei sobre", "was ich dir über", "was ich über", "wat ik je vertelde over",
    "wat ik zei over", "wat ik je over", "o tym co pisałam o", "o tym co pisałem o", "o tym co ci mówiłam o",
    "o tym co ci mówiłem o", "o tym co ci pisałam o", "o tym co ci pisałem o", "yung sinabi ko tungkol sa",
)  # fmt: skip
ABOUT_ME = (
    "about me", "abt me", "on me", "of me", "regarding me", "de moi", "sur moi", "über mich", "de mí", "de mi",
    "sobre mim", "sobre mí", "di me", "over mij", "o mnie", "hakkımda", "mere baare mein", "mere bare mein",
)  # fmt: skip
# "How old is" asked in other languages, with its verb (so not "hace cuántos años nos casamos", how many years
# ago), before the one asked about ("cuántos años tiene Chispa", "quantos anos a Neusa tem"), and the words that
# tell an age in them: after any number ("tiene 5 años", "neun Jahre") or before one ("cumple 40"). language/asked.py
# reads an age asked and told in them as in English.
HOW_OLD = (
    "cuántos años tiene", "cuantos años tiene", "cuántos años cumple", "cuantos años cumple",
    "cuántos años va a cumplir", "cuantos años va a cumplir", "quantos anos tem", "quantos anos faz",
    "quantos anos vai fazer", "quantos anos a", "quantos anos o", "quanti anni ha", "quanti anni compie",
    "quel âge a", "quel age a", "wie alt ist", "wie alt wird", "hoe oud is", "hoe oud wordt", "ile lat ma",
    "ile lat kończy", "ile lat skończy",
)  # fmt: skip
# A phone number asked in so many words ("what's the vet's phone number", "wats the phone no 4 Kirkgate Surgery",
# "Qual é o telefone do Sr. Joaquim?"): only a statement with a run of digits answers (engine/recall.py).
PHONE_ASKED = (
    "phone number", "phone no", "phone #", "phone num", "telephone", "mobile number", "mobile no", "cell number",
    "cell no", "contact number", "landline", "whatsapp number", "number to call", "teléfono", "telefono", "telefone",
    "téléphone", "telefonnummer", "handynummer", "numer telefonu", "numer komórki", "telefoon", "telefoonnummer",
    "puhelinnumero", "telefonszám", "τηλέφωνο", "namba ya simu", "nambari ya simu", "telepono", "numero ng telepono",
    "telefon numarası", "telefon numarasi", "fon number",
)  # fmt: skip
# A time of day asked in so many words ("what time is the library sesh", "at what time does it begin", "a qué
# hora", "um wie viel Uhr"): only a statement with a clock time answers, not one with a day alone.
CLOCK_ASKED = (
    "what time", "wat time", "wht time", "wot time", "what tym", "a qué hora", "a que hora", "à quelle heure",
    "a quelle heure", "quelle heure", "um wie viel uhr", "um wieviel uhr", "wie laat", "hoe laat", "a che ora",
    "que horas", "a que horas", "o której", "saat kaçta", "saat kacta", "hangi saatte", "mihin aikaan",
    "hány órakor", "hány órára", "τι ώρα", "nani ji", "anong oras", "kya time", "kitne baje",
)  # fmt: skip
AGE_UNITS = ("años", "anos", "anni", "ans", "jahre", "jahren", "jaar", "lat", "saal", "taon")
TURNS_WORDS = ("cumple", "cumplirá", "cumplió", "faz", "fará", "fez", "compie", "compirà", "wird", "wordt", "fête")
# A name asked in other languages, before the one whose name it is ("cómo se llama la vet", "c'est quoi le nom de
# mon proprio", "wie heißt der Zahnarzt"), and the words between them that are not that one (articles,
# possessives): language/asked.py reads them as "what is the name of ...". Hindi-English asks after it: "dulhe ka naam".
NAME_ASKED = (
    "cómo se llama", "como se llama", "cómo se llamaba", "como se llamaba", "cuál es el nombre",
    "cual es el nombre", "qual é o nome", "qual e o nome", "qual era o nome", "como se chama",
    "c'est quoi le nom", "quel est le nom", "comment s'appelle", "come si chiama", "qual è il nome",
    "wie heißt", "wie heisst", "wie hieß", "hoe heet", "jak się nazywa", "ano ang pangalan ng",
    "ano yung pangalan ng",
)  # fmt: skip
NAME_ASKED_AFTER = ("ka naam", "ki naam", "ke naam", "ka name", "ki name")
# "I told you" in those languages: what follows asks for what they told ("lo de los taxes, qué te dije?").
TOLD_YOU_ELSEWHERE = (
    "te dije", "te conté", "te conte", "te falei", "te disse", "je t'ai dit", "je vous ai dit", "ti ho detto",
    "hab ich dir", "habe ich dir", "heb ik je", "ci mówiłam", "ci mówiłem", "ci powiedziałam", "ci powiedziałem",
    "ci podałam", "ci podałem", "batayi thi", "bataya tha", "batai thi", "sinabi ko",
)  # fmt: skip
# Words of a question in those languages that ask what to do, which is a model's to answer: "¿Dónde puedo renovar
# mi pasaporte?", "Wie kann ich meine Steuererklärung machen?", "Cosa mi consigli?", "dapat ba ako mag-resign?"
# (a word's start: "consigli", "consiglia").
WHAT_TO_DO_ELSEWHERE = (
    "puedo", "puede", "podría", "debo", "debería", "recomiend", "aconsej", "conviene", "hago", "hacer",
    "posso", "pode", "poderia", "devo", "deveria", "recomend", "aconselh", "faço", "fazer", "acha",
    "peux", "peut", "pourr", "dois", "doit", "devrai", "conseill", "recommand", "faire", "penses",
    "può", "puoi", "dovrei", "consigli", "fare", "pensi",
    "kann", "kannst", "könnt", "soll", "sollte", "muss", "empfiehl", "empfehl", "rätst", "machen", "meinst",
    "kan ", "moet", "zou", "raad", "aanraden",
    "mogę", "może", "powinn", "polec", "radzisz", "zrobić",
    "chahiye", "sakta", "sakti", "karu", "karun", "suggest", "best",
    "dapat", "pwede", "puwede", "sa tingin mo",
)  # fmt: skip
# Words between the words that ask a name (or an age) in another language and the one asked about: articles,
# possessives and fillers ("cómo se llamaba otra vez mi dentista", "wie heißt eigentlich mein Zahnarzt").
OWNER_ARTICLES = (
    *OWNING_WORDS,
    "tu", "tus", "su", "sus", "el", "la", "los", "las", "del", "seu", "sua", "o", "a", "do", "da", "dos", "das",
    "ton", "ta", "le", "les", "du", "de", "des", "di", "dei", "il", "lo", "tuo", "tua", "della", "dello", "dein",
    "deine", "der", "die", "dem", "den", "het", "ng", "yung", "ang", "si", "otra", "otro", "vez", "eigentlich",
    "nochmal", "noch", "wieder", "encore", "déjà", "deja", "mesmo", "mesma", "nuovo", "ancora", "weer", "alweer",
    "jeszcze", "raz",
)  # fmt: skip
# What is never the one asked about there: the assistant, a thing pointed at, the world ("wie heißt du?", "wie
# heißt das auf Englisch?", "cómo se llama eso en inglés", "c'est quoi le nom de ce film").
NOT_AN_OWNER = (
    "du", "tu", "usted", "ustedes", "vous", "je", "jij", "u", "ty", "pan", "pani", "lei", "voi", "você", "vocês",
    "das", "dies", "dieses", "diese", "dieser", "dat", "dit", "eso", "esto", "esta", "este", "ese", "esa", "ça",
    "ce", "cette", "cet", "ces", "questa", "questo", "quello", "quella", "isso", "isto", "essa", "esse", "to",
    "ten", "ta", "auf", "en", "in", "em", "na", "w", "z", "im", "am", "al", "hai", "ka", "ki", "ke", "kya", "mera",
    "meri", "mere", "tera", "teri", "aap", "capital", "capitale", "hauptstadt", "hoofdstad", "stolica",
)  # fmt: skip
# A yes to a question the memory asked ("Did you mean ...?": services/spoken_curation.py), as a whole message; not
# "ok", which may only say it was read.
AGREEING = (
    "yes", "yeah", "yep", "yup", "yes please", "please do", "do it", "go ahead", "correct", "exactly", "that one",
    "that's it", "that's right", "sure", "sí", "si", "claro", "oui", "ja", "jawohl", "sim",
    "tak", "haan", "haa", "han ji", "oo", "opo", "esatto", "certo", "precies", "genau",
)  # fmt: skip
