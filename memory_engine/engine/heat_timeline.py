"""The heat timeline of a memory space as an SVG chart: each session's heat over time, the promotion
threshold, and the moments sessions were promoted or evicted.

Pure: takes the points, returns markup (every label escaped). The admin shows it; the points come from
the HeatEvent rows the engine writes whenever a session's heat changes (mid_term.record_heat).
"""

from dataclasses import dataclass
from datetime import datetime
from html import escape

WIDTH, HEIGHT = 960, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 150, 16, 36  # margins: axis labels left, legend right
PALETTE = ["#3b5bdb", "#2b8a3e", "#c2255c", "#e67700", "#5f3dc4", "#0b7285", "#862e9c", "#5c940d"]
MARKERS = {"promoted": "▲", "evicted": "✕"}


@dataclass(frozen=True)
class Point:
    session_id: int
    at: datetime
    heat: float
    cause: str


def heat_timeline_svg(points: list[Point], threshold: float, *, sessions_shown: int = 8) -> str:
    """An SVG of the hottest `sessions_shown` sessions' heat (by their highest point), one line each,
    with the threshold dashed and promotions (▲) and evictions (✕) marked. Empty input gives a chart
    that says so."""
    if not points:
        return _frame('<text x="50%" y="50%" text-anchor="middle" fill="#6b7385">No heat recorded yet</text>')
    by_session: dict[int, list[Point]] = {}
    for point in sorted(points, key=lambda p: (p.at, p.session_id)):
        by_session.setdefault(point.session_id, []).append(point)
    shown = sorted(by_session, key=lambda sid: -max(p.heat for p in by_session[sid]))[:sessions_shown]
    start = min(p.at for p in points).timestamp()
    end = max(p.at for p in points).timestamp()
    span = max(end - start, 1.0)
    top = max(threshold, *(p.heat for sid in shown for p in by_session[sid])) * 1.1 or 1.0
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(at: datetime) -> float:
        return LEFT + inner_w * (at.timestamp() - start) / span

    def y(heat: float) -> float:
        return TOP + inner_h * (1 - heat / top)

    parts = [
        f'<line x1="{LEFT}" y1="{TOP + inner_h}" x2="{LEFT + inner_w}" y2="{TOP + inner_h}" stroke="#adb5bd"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + inner_h}" stroke="#adb5bd"/>',
    ]
    for step in range(5):
        value = top * step / 4
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end" font-size="11" fill="#6b7385">'
            f"{value:.1f}</text>"
        )
    time_format = "%Y-%m-%d %H:%M" if span >= 3600 else "%Y-%m-%d %H:%M:%S"  # a short span needs seconds
    for fraction, anchor in ((0, "start"), (1, "end")):
        at = datetime.fromtimestamp(start + span * fraction, tz=points[0].at.tzinfo)
        parts.append(
            f'<text x="{LEFT + inner_w * fraction:.1f}" y="{HEIGHT - 12}" text-anchor="{anchor}" font-size="11" '
            f'fill="#6b7385">{escape(at.strftime(time_format))}</text>'
        )
    parts.append(
        f'<line class="threshold" x1="{LEFT}" y1="{y(threshold):.1f}" x2="{LEFT + inner_w}" y2="{y(threshold):.1f}" '
        f'stroke="#e8590c" stroke-dasharray="6 4"/>'
        f'<text x="{LEFT + inner_w + 6}" y="{y(threshold) + 4:.1f}" font-size="11" fill="#e8590c">'
        f"threshold {threshold:g}</text>"
    )
    for index, session_id in enumerate(shown):
        colour = PALETTE[index % len(PALETTE)]
        line = by_session[session_id]
        coords = " ".join(f"{x(p.at):.1f},{y(p.heat):.1f}" for p in line)
        parts.append(
            f'<polyline class="session" data-session="{session_id}" points="{coords}" fill="none" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        for p in line:
            marker = MARKERS.get(p.cause)
            if marker:
                parts.append(
                    f'<text class="event {escape(p.cause)}" x="{x(p.at):.1f}" y="{y(p.heat) - 6:.1f}" '
                    f'text-anchor="middle" font-size="12" fill="{colour}">{marker}'
                    f"<title>session {session_id} {escape(p.cause)} at {escape(p.at.isoformat())}, "
                    f"heat {p.heat:.2f}</title></text>"
                )
        legend_y = TOP + 24 + 18 * index
        parts.append(
            f'<line x1="{LEFT + inner_w + 6}" y1="{legend_y}" x2="{LEFT + inner_w + 22}" y2="{legend_y}" '
            f'stroke="{colour}" stroke-width="2"/>'
            f'<text x="{LEFT + inner_w + 26}" y="{legend_y + 4}" font-size="11">session {session_id}</text>'
        )
    parts.append(
        f'<text x="{LEFT + inner_w + 6}" y="{TOP + 24 + 18 * len(shown) + 8}" font-size="11" fill="#6b7385">'
        "▲ promoted ✕ evicted</text>"
    )
    return _frame("".join(parts))


def _frame(body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heat-timeline" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="Heat of each session over time">{body}</svg>'
    )
