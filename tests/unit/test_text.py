"""What every layer reads of text alike (memory_engine/language/text.py), and that no module reads it its own way."""

from pathlib import Path

from memory_engine.language.text import straight

ROOT = Path(__file__).resolve().parents[2]


def test_every_apostrophe_chat_mixes_is_read_as_the_straight_one():
    assert {straight(word) for word in ("I’m", "I‘m", "Iʼm", "I＇m", "I'm")} == {"I'm"}
    assert straight("“quoted” words") == "“quoted” words"  # double quotes are not apostrophes


def test_no_module_straightens_apostrophes_its_own_way():
    own_way = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "memory_engine").rglob("*.py"))
        if path.name != "text.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if 'replace("\\u2019"' in line or "replace('\\u2019'" in line or 'maketrans({"\\u2019"' in line
    ]
    assert own_way == [], "straighten apostrophes with memory_engine.language.text.straight"
