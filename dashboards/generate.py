"""Writes pagebench's Grafana dashboards, made by the code in `boards/`, as the JSON files
Grafana provisions: `python dashboards/generate.py [DIR]` (DIR: `json/` beside this file,
which docker-compose.yml mounts). The files are its output, never edited by hand; a
dashboard's file no longer made is removed, so DIR holds exactly the dashboards."""

from __future__ import annotations

import argparse
from pathlib import Path

from boards import BOARDS, render


def main() -> None:
    parser = argparse.ArgumentParser(description="Write the dashboards (boards/) as the JSON files Grafana provisions.")
    parser.add_argument("out", nargs="?", type=Path, default=Path(__file__).resolve().parent / "json",
                        help="where to write the JSON files (default: %(default)s)")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    written = set()
    for name, board in BOARDS.items():
        path = out / f"{name}.json"
        path.write_text(render(board()), encoding="utf-8")
        written.add(path)
    for stale in sorted(set(out.glob("*.json")) - written):
        stale.unlink()
        print(f"removed {stale} (no dashboard makes it)")
    print(f"wrote {len(written)} dashboards to {out}")


if __name__ == "__main__":
    main()
