"""Reading sheets without the contestants' names: a reader who sees which reply is the human
reference, or which model wrote one, reads with that in mind.

``blind`` turns a sheet (``reply_sheet.py``, ``real_pairs.py sheet``) into one whose replies
are labelled ``R1``, ``R2``... in an order shuffled per item (fixed by the item and a salt, so
a second reading gets another order), split into parts for several readers, and writes the key
beside it. ``unblind`` takes the filled parts back: each item's ``notes`` and ``order`` by
label become notes and order by contestant, in the sheet ``real_pairs.py build`` reads. ::

    python benchmarks/blind_sheet.py blind SHEET --out DIR --parts 6 [--salt first] [--items FILE]
    # ... readers fill DIR/part-N.jsonl: "notes" {label: note}, "order" [[label, ...], ...]
    python benchmarks/blind_sheet.py unblind DIR --out FILLED_SHEET
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def blind(sheet: Path, out: Path, parts: int, salt: str, only: set[str] | None) -> None:
    rows = [r for r in _rows(sheet) if only is None or r["item"] in only]
    out.mkdir(parents=True, exist_ok=True)
    key: dict[str, dict[str, str]] = {}
    blinded = []
    for r in rows:
        names = sorted(r["replies"])
        seed = int(hashlib.sha256(f"{salt}:{r['item']}".encode()).hexdigest()[:8], 16)
        random.Random(seed).shuffle(names)
        labels = {f"R{k}": name for k, name in enumerate(names, start=1)}
        key[r["item"]] = labels
        blinded.append(
            {
                "item": r["item"],
                "turns": r["turns"],
                "replies": {label: r["replies"][name] for label, name in labels.items()},
                "notes": {label: "" for label in labels},
                "order": [],
            }
        )
    for n in range(parts):
        _write(out / f"part-{n + 1}.jsonl", blinded[n::parts])
    (out / "key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{out}: {len(blinded)} items in {parts} parts")


def unblind(folder: Path, out: Path) -> None:
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    filled = []
    for part in sorted(folder.glob("part-*.jsonl")):
        for n, r in enumerate(_rows(part), start=1):
            labels = key[r["item"]]
            ranked = [label for group in r["order"] for label in group]
            if sorted(ranked) != sorted(labels) or not all(r["notes"].get(x) for x in labels):
                raise SystemExit(f"{part}: line {n}: every reply needs a note and one place")
            filled.append(
                {
                    "item": r["item"],
                    "turns": r["turns"],
                    "replies": {labels[x]: text for x, text in r["replies"].items()},
                    "notes": {labels[x]: note for x, note in r["notes"].items()},
                    "order": [[labels[x] for x in group] for group in r["order"]],
                }
            )
    filled.sort(key=lambda r: r["item"])
    _write(out, filled)
    print(f"{out}: {len(filled)} items read")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    b = sub.add_parser("blind", help="a sheet's replies under shuffled labels, in parts")
    b.add_argument("sheet", type=Path)
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--parts", type=int, default=1)
    b.add_argument("--salt", default="first")
    b.add_argument("--items", type=Path, help="a file of item ids, one a line: only these")
    u = sub.add_parser("unblind", help="the filled parts as a sheet by contestant")
    u.add_argument("folder", type=Path)
    u.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.step == "blind":
        only = set(args.items.read_text().split()) if args.items else None
        blind(args.sheet, args.out, args.parts, args.salt, only)
    else:
        unblind(args.folder, args.out)


if __name__ == "__main__":
    main()
