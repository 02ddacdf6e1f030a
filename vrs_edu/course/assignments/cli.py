"""``vrs-edu assignments list | build | grade``: the teacher's commands (see the README's "Teacher's guide").

Heavy imports (nbconvert, nbclient) happen inside the commands: the ``vrs-edu`` entry point imports this module at
every start-up to register the sub-commands.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def cmd_list(args) -> int:
    from .build import make_copies
    from .source import HIDDEN, PUBLIC, SOURCES, discover, tags

    for a in discover(args.sources or SOURCES):
        cells = make_copies(a)["grader"].cells
        pts = {k: sum(c.metadata["points"] for c in cells if k in tags(c)) for k in (PUBLIC, HIDDEN)}
        print(f"{a.name:24s} {pts[PUBLIC]:g} public + {pts[HIDDEN]:g} hidden points  {a.title}")
    return 0


def cmd_build(args) -> int:
    from .build import DEFAULT_OUT, build
    from .source import SOURCES

    args.out = args.out or DEFAULT_OUT
    status = build(args.out, args.sources or SOURCES, check=args.check)
    bad = {p: s for p, s in status.items() if s in ("stale", "missing", "orphan")}
    for path, s in status.items():
        if s != "unchanged" or args.verbose:
            print(f"{s:9s} {path}")
    n = len({p.stem for p in status})
    if args.check:
        if bad:
            print(f"{len(bad)} generated notebook(s) differ from their sources: run `vrs-edu assignments build`")
            return 1
        print(f"{n} assignments: every generated notebook matches its source")
    else:
        print(f"{n} assignments built into {args.out} (student/, solution/, grader/)")
    return 0


def _submissions(paths: list[str]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.ipynb") if ".ipynb_checkpoints" not in q.parts)
        else:
            out.append(p)
    return out


def cmd_grade(args) -> int:
    from .grade import grade_submission
    from .source import SOURCES

    subs = _submissions(args.submissions)
    if not subs:
        raise ValueError(f"no .ipynb files in {args.submissions}")
    if args.student and len(subs) > 1:
        raise ValueError("--student names one submission; with several, names come from the file or folder names")
    seen: dict[tuple[str, str], Path] = {}
    for path in subs:
        r = grade_submission(path, assignment=args.assignment, student=args.student, sources=args.sources or SOURCES,
                             cell_timeout=args.timeout, total_timeout=args.total_timeout, out_dir=args.out)
        if (r.assignment, r.student) in seen:
            print(f"warning: {path} and {seen[r.assignment, r.student]} are both {r.student}'s {r.assignment}: "
                  "the later report replaced the earlier one")
        seen[r.assignment, r.student] = path
        print(f"{r.student:16s} {r.assignment:22s} {r.points:g}/{r.max_points:g} points  "
              f"{r.checks_passed}/{len(r.checks)} checks  {r.status}  ({r.wall_s:.1f} s)  {path}")
        for e in r.errors:
            print(f"{'':18s}{e.splitlines()[0][:120]}")
    print(f"reports in {args.out}/<assignment>/<student>.json|.csv; class summary {Path(args.out) / 'summary.csv'}")
    return 0


def add_commands(sub) -> None:
    """Register ``assignments`` on the ``vrs-edu`` sub-parsers (appended to ``vrs_edu.cli.EXTRA_COMMANDS``)."""
    a = sub.add_parser("assignments", help="build student/solution/grader notebooks and grade submissions")
    asub = a.add_subparsers(dest="assignments_command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--sources", help="folder of assignment sources (default: the package's own)")

    ls = asub.add_parser("list", parents=[common], help="the assignments and their points")
    ls.set_defaults(fn=cmd_list)

    b = asub.add_parser("build", parents=[common], help="generate OUT/{student,solution,grader}/<name>.ipynb")
    b.add_argument("--out", help="output folder (default: data/assignments in a checkout of the course)")
    b.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if a generated notebook differs from a fresh build (for CI)")
    b.add_argument("--verbose", action="store_true", help="also list unchanged files")
    b.set_defaults(fn=cmd_build)

    g = asub.add_parser("grade", parents=[common], help="grade submitted notebooks, write JSON/CSV reports")
    g.add_argument("submissions", nargs="+", help="submitted .ipynb files, or folders searched for them")
    g.add_argument("--assignment", help="assignment name (default: read from each notebook's metadata)")
    g.add_argument("--student", help="student name for a single submission (default: the file or folder name)")
    g.add_argument("--out", default="grades", help="report folder (default: ./grades)")
    g.add_argument("--timeout", type=float, default=60, help="seconds one cell may run (default 60)")
    g.add_argument("--total-timeout", type=float, default=300,
                   help="seconds one whole notebook may run, kernel start included (default 300)")
    g.set_defaults(fn=cmd_grade)
