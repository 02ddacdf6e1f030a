"""``vrs-edu assignments list | build | validate | grade | export``: the teacher's commands (see the README's "Teacher's guide").

Heavy imports (nbconvert, nbclient) happen inside the commands: the ``vrs-edu`` entry point imports this module at
every start-up to register the sub-commands.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from vrs_edu.cli_args import input_dir, input_path, output_dir, positive_float
from vrs_edu.course.assignments.sandbox import Limits


def cmd_list(args) -> int:
    from vrs_edu.course.assignments.build import make_copies
    from vrs_edu.course.assignments.source import HIDDEN, PUBLIC, SOURCES, discover, tags

    for a in discover(args.sources or SOURCES):
        try:
            cells = make_copies(a)["grader"].cells
        except ValueError as e:   # one broken draft does not hide the others
            print(f"{a.name:24s} broken: {e}")
            continue
        pts = {k: sum(c.metadata["points"] for c in cells if k in tags(c)) for k in (PUBLIC, HIDDEN)}
        print(f"{a.name:24s} {pts[PUBLIC]:g} public + {pts[HIDDEN]:g} hidden points  {a.title}")
    return 0


def cmd_build(args) -> int:
    from vrs_edu.course.assignments.build import DEFAULT_OUT, build
    from vrs_edu.course.assignments.korean import build_korean
    from vrs_edu.course.assignments.source import SOURCES

    args.out = args.out or DEFAULT_OUT
    status = build(args.out, args.sources or SOURCES, check=args.check)
    korean = build_korean(args.out, args.sources or SOURCES, check=args.check)
    untranslated = {p: s for p, s in korean.items() if s.startswith("untranslated")}
    status.update({p: "untranslated" if p in untranslated else s for p, s in korean.items()})
    bad = {p: s for p, s in status.items() if s in ("stale", "missing", "orphan")}
    broken = {p: s for p, s in status.items() if s.startswith("broken")}
    for path, s in status.items():
        if s not in ("unchanged", "kept") or args.verbose:
            print(f"{s:9s} {path}")
    n = len({p.stem for p in status if p.suffix in (".py", ".ipynb")}) - len(broken)
    if broken:
        print(f"{len(broken)} source(s) broken, not built (their generated notebooks kept as they were); the other "
              f"{n} built", file=sys.stderr)
        return 1
    if untranslated:   # the English copies are built; the Korean ones would fall behind them: say which texts
        for report in dict.fromkeys(s.split(": ", 1)[1] for s in untranslated.values()):
            print(report, file=sys.stderr)
        print(f"{len(untranslated)} Korean copy(ies) not built: their catalogs (sources/ko/*.po) lack a current "
              "translation", file=sys.stderr)
        return 1
    if not args.check and not args.no_validate:
        print(f"{n} assignments built into {args.out}; grading each solution copy (--no-validate skips it)")
        return _report_validation(args.sources or SOURCES, None)
    if args.check:
        if bad:
            print(f"{len(bad)} generated notebook(s) differ from their sources: run `vrs-edu assignments build`")
            return 1
        print(f"{n} assignments: every generated notebook matches its source")
    else:
        print(f"{n} assignments built into {args.out} (student/, solution/, grader/; ko/student/, ko/solution/)")
    return 0


def _report_validation(sources, names) -> int:
    from vrs_edu.course.assignments.validate import validate_solutions

    problems = validate_solutions(sources, names)
    for name, found in problems.items():
        print(f"{name:24s} " + ("valid: the solution earns every point" if not found else
                                f"NOT VALID: {len(found)} problem(s)"))
        for line in found:
            print(f"{'':26s}{line.splitlines()[0][:160]}")
    return 1 if any(problems.values()) else 0


def cmd_export(args) -> int:
    from vrs_edu.course.assignments.gradebook import gradebook, read_roster, write_gradebook

    book = gradebook(args.grades, read_roster(args.roster) if args.roster else [], args.assignment or [])
    path = write_gradebook(book, args.out or Path(args.grades) / "gradebook.csv")
    for warning in book.warnings:
        print(f"warning: {warning}")
    print(f"{len(book.rows)} students x {len(book.assignments)} assignments: {path}")
    return 0


def cmd_validate(args) -> int:
    from vrs_edu.course.assignments.source import SOURCES

    return _report_validation(args.sources or SOURCES, args.names or None)


def collect(paths: list[str], known: tuple[str, ...] = ()) -> list[tuple[Path, str]]:
    """Every submitted notebook with its student's name, by the README's layout. In a folder given on the command
    line, ``<folder>/<student>/...ipynb`` belongs to ``<student>`` (whatever the file is called, however deep), and
    ``<folder>/<student>.ipynb`` to ``<student>``; a file given by itself is its stem's (or its folder's when it is
    named after an assignment; see :func:`.grade.student_name`). ``.ipynb_checkpoints`` are skipped."""
    from vrs_edu.course.assignments.grade import safe_name, student_name

    out = []
    for p in map(Path, paths):
        if p.is_dir():
            for q in sorted(p.rglob("*.ipynb")):
                if ".ipynb_checkpoints" in q.parts:
                    continue
                rel = q.relative_to(p)
                out.append((q, safe_name(rel.parts[0]) if len(rel.parts) > 1 else student_name(q, None, known)))
        else:
            out.append((p, student_name(p, None, known)))
    return out


def deadline(text: str) -> dt.datetime:
    """``--deadline``: an ISO date and time; without an offset, the machine's local time."""
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date and time like 2026-12-10 23:59, got {text!r}") from None
    return when if when.tzinfo is not None else when.astimezone()


def limits_from(args) -> Limits:
    """The sandbox's limits that the command line sets (the others keep :class:`.sandbox.Limits`' defaults)."""
    return Limits(memory_bytes=int(args.memory_limit * (1 << 30)), disk_bytes=int(args.disk_limit * (1 << 30)))


def missing_reports(roster: list[str], reports: list, assignment: str | None, session, out: Path) -> list:
    """A report of 0 points, status "missing", for each student of ``roster`` without a graded file (in this run,
    or an earlier report in ``out``) of an assignment this grading run graded (or of ``assignment``)."""
    import json

    from vrs_edu.course.assignments.grade import Report
    from vrs_edu.course.assignments.source import is_test

    graded = sorted({r.assignment for r in reports if r.assignment in session.assignments} | (
        {assignment} if assignment else set()))
    have = {(r.student, r.assignment) for r in reports}
    for p in out.glob("*/*.json"):   # earlier runs' reports: a student graded then is not missing now
        try:
            earlier = json.loads(p.read_text())
            if earlier.get("status") != "missing":
                have.add((earlier["student"], earlier["assignment"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    out = []
    for name in graded:
        prepared = session.assignment(name)
        total = float(sum(c.metadata["points"] for c in prepared["copies"]["grader"].cells if is_test(c)))
        for student in roster:
            if (student, name) not in have:
                out.append(Report(student, name, f"(missing: {student}/{name})", "missing", max_points=total,
                                  errors=["no file handed in (the student is on the roster)"],
                                  key=student, version=prepared["version"]))
    return out


def cmd_grade(args) -> int:
    from vrs_edu.course.assignments.collection import late_note, name_pattern, platform_name
    from vrs_edu.course.assignments.grade import grade_submission, grading_session, safe_name, write_report
    from vrs_edu.course.assignments.gradebook import read_roster
    from vrs_edu.course.assignments.source import SOURCES, discover

    sources = args.sources or SOURCES
    known = tuple(a.name for a in discover(sources))
    subs = collect(args.submissions, known)
    out = Path(args.out)
    previous = _previous_students(out)   # a regrade of a file keeps the student it was graded as
    subs = [(path, previous.get(_resolved(path), student)) for path, student in subs]
    if args.student:
        subs = [(path, safe_name(args.student)) for path, _ in subs]
    pattern = name_pattern(args.names) if args.names else None
    hints, late = {}, {}    # path -> the assignment its platform name gives; path -> why it is late
    for i, (path, student) in enumerate(subs):
        found = platform_name(path, pattern) if pattern is not None else None
        if found is not None:
            student, own, marked = found
            subs[i] = (path, safe_name(student))
            hints[path] = own if own in known else None
        else:
            marked = False
        late[path] = late_note(path, args.deadline, marked)
    taken: dict[tuple[str, str], list[Path]] = {}
    _drop_missing_rows(out)             # a roster's "missing" rows are made again at the end, from this run's files
    keys = _existing_keys(out)          # (assignment, key in lower case) -> submitted file, of earlier reports
    reports = []
    with grading_session(sources, out_dir=out, submissions=args.submissions, isolate=not args.no_isolation,
                         limits=limits_from(args)) as session:
        print(session.isolation.describe())
        for path, student in subs:
            r = grade_submission(path, assignment=args.assignment or hints.get(path), student=student,
                                 cell_timeout=args.timeout,
                                 total_timeout=args.total_timeout, out_dir=None,
                                 allow_reference=args.allow_reference, session=session)
            earlier = taken.setdefault((r.assignment, r.student), [])
            earlier.append(path)
            if len(earlier) > 1:  # one row per file: a second file of the same student and assignment gets its own
                r.errors.append(f"note: {r.student} handed in {len(earlier)} files for {r.assignment}: "
                                + ", ".join(map(str, earlier)))
            if late[path]:
                r.late = True
                r.errors.insert(0, late[path])
            r.key = _free_key(keys, r.assignment, safe_name(r.student), _resolved(path))
            write_report(r, out, r.graded)
            reports.append(r)
            print(f"{r.student:16s} {r.assignment:22s} {r.points:g}/{r.max_points:g} points  "
                  f"{r.checks_passed}/{len(r.checks)} checks  {r.status}  ({r.wall_s:.1f} s)  {path}")
            for e in r.flags + r.errors:
                print(f"{'':18s}{e.splitlines()[0][:120]}")
            if r.stop:
                left = len(subs) - len(reports)
                print(f"grading stopped after {r.student} ({path}): {r.stop}. {left} notebook(s) not graded; find "
                      "what changed the course, then grade them again", file=sys.stderr)
                return 1
    for warning in _case_warnings(reports, out):
        print(warning)
    if args.roster:
        roster = read_roster(args.roster)
        for r in missing_reports(roster, reports, args.assignment, session, out):
            write_report(r, out)
            print(f"{r.student:16s} {r.assignment:22s} 0/{r.max_points:g} points  missing (on the roster, no file)")
        off = sorted({r.student for r in reports} - set(roster))
        if off:
            print(f"not on the roster {args.roster}: {', '.join(off)} (graded all the same)")
    print(f"{len(subs)} notebooks graded; reports in {args.out}/<assignment>/<student>.json|.csv; "
          f"class summary {out / 'summary.csv'} (flags: read the report)")
    if not session.isolation.isolated:
        print(session.isolation.describe())   # said again at the end, where a teacher reads last
    return 0


def _drop_missing_rows(out: Path) -> None:
    """Remove the reports of status "missing" (a student on a roster without a file) from ``out``: a student who
    hands in late must get one row, not "missing" beside the graded file."""
    import json

    from vrs_edu.course.assignments.grade import write_summary

    dropped = False
    for p in sorted(out.glob("*/*.json")):
        try:
            missing = json.loads(p.read_text()).get("status") == "missing"
        except (OSError, ValueError, AttributeError):
            continue
        if missing:
            for suffix in (".json", ".csv", ".feedback.md"):
                p.with_name(p.name[: -len(".json")] + suffix).unlink(missing_ok=True)
            dropped = True
    if dropped:
        write_summary(out)


def _existing_keys(out: Path) -> dict[tuple[str, str], str]:
    """{(assignment folder, report key in lower case): submitted file} of the reports already in ``out``."""
    import json

    found = {}
    for p in sorted(out.glob("*/*.json")):
        try:
            found[(p.parent.name, p.stem.lower())] = _resolved(Path(json.loads(p.read_text())["submission"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _free_key(keys: dict, assignment: str, key: str, submission: str) -> str:
    """The report key for one submission: the student's name, or ``name~2``, ``name~3``... when a report of
    another file already has that name *in any case* ("Mia" and "mia" would be one file on a case-insensitive file
    system: macOS, Windows)."""
    from vrs_edu.course.assignments.grade import safe_name

    folder, n, candidate = safe_name(assignment), 1, key
    while keys.get((folder, candidate.lower()), submission) != submission:
        n += 1
        candidate = f"{key}~{n}"
    keys[(folder, candidate.lower())] = submission
    return candidate


def _case_warnings(reports, out: Path) -> list[str]:
    """Students of one assignment whose names differ only in case: a warning in each of their reports (rewritten)
    and one line for the command's output."""
    from vrs_edu.course.assignments.grade import write_report

    groups: dict[tuple[str, str], list] = {}
    for r in reports:
        groups.setdefault((r.assignment, r.student.lower()), []).append(r)
    lines = []
    for (assignment, _), rs in groups.items():
        names = sorted({r.student for r in rs})
        if len(names) < 2:
            continue
        text = (f"warning: students {', '.join(map(repr, names))} differ only in case in {assignment}: one student "
                f"or several? (reports {', '.join(r.key + '.json' for r in rs)})")
        for r in rs:
            r.errors.append(text)
            write_report(r, out, r.graded)
        lines.append(text)
    return lines


def _resolved(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path)


def _previous_students(out: Path) -> dict[str, str]:
    """{submitted file: student} of the reports already in ``out``."""
    import json

    found = {}
    for p in sorted(out.glob("*/*.json")):
        try:
            r = json.loads(p.read_text())
            found[_resolved(Path(r["submission"]))] = r["student"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _check_roster(path) -> None:
    """``--roster``: a file that cannot be read as a roster, in one line, before any work (grade and export)."""
    from vrs_edu.cli_args import UsageError

    from vrs_edu.course.assignments.gradebook import read_roster

    try:
        read_roster(path)
    except (ValueError, OSError) as e:
        raise UsageError(f"argument --roster: {e}") from None


def check_export(args) -> None:
    """A roster that cannot be read, in one line, before anything is written."""
    if args.roster:
        _check_roster(args.roster)


def check_grade(args) -> None:
    """The arguments together, before anything is graded."""
    from vrs_edu.cli_args import UsageError

    from vrs_edu.course.assignments.source import SOURCES, discover

    try:
        known = [a.name for a in discover(args.sources or SOURCES)]
    except FileNotFoundError as e:
        raise UsageError(f"argument --sources: {e}") from None
    if args.assignment is not None and args.assignment not in known:
        raise UsageError(f"argument --assignment: unknown assignment {args.assignment!r}; expected one of "
                         f"{', '.join(known) or '(none in --sources)'}")
    subs = collect(args.submissions, tuple(known))
    empty = [p for p in args.submissions if Path(p).is_dir() and not any(Path(p).rglob("*.ipynb"))]
    if empty:
        raise UsageError(f"argument submissions: {empty[0]!r} holds no .ipynb file; expected notebooks or folders "
                         "of notebooks")
    if args.names:
        from vrs_edu.course.assignments.collection import name_pattern

        try:
            name_pattern(args.names)
        except ValueError as e:
            raise UsageError(str(e)) from None
    if args.roster:
        _check_roster(args.roster)
    if args.student and len(subs) > 1:
        raise UsageError(f"argument --student: names one submission, but {len(subs)} were given; without it each "
                         "student's name comes from the folder or file name")


def add_commands(sub) -> None:
    """Register ``assignments`` on the ``vrs-edu`` sub-parsers (:func:`vrs_edu.cli.build_parser` calls it)."""
    a = sub.add_parser("assignments", help="build student/solution/grader notebooks and grade submissions")
    asub = a.add_subparsers(dest="assignments_command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--sources", type=input_dir,
                        help="the teacher's folder of assignment sources (default: data/assignments/sources in a "
                             "checkout of the course; the installed package has none)")

    ls = asub.add_parser("list", parents=[common], help="the assignments and their points")
    ls.set_defaults(fn=cmd_list)

    b = asub.add_parser("build", parents=[common], help="generate OUT/{student,solution,grader}/<name>.ipynb")
    b.add_argument("--out", type=output_dir, help="output folder (default: data/assignments in a checkout of the course)")
    b.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if a generated notebook differs from a fresh build (for CI)")
    b.add_argument("--verbose", action="store_true", help="also list unchanged files")
    b.add_argument("--no-validate", action="store_true",
                   help="do not grade each solution copy after building (it must earn every point; ~6 s each)")
    b.set_defaults(fn=cmd_build)

    e = asub.add_parser("export", help="the gradebook: one row per student, one column per assignment")
    e.add_argument("--grades", default="grades", type=input_dir, help="the report folder of `grade` (default grades)")
    e.add_argument("--roster", type=input_path, help="CSV file with a 'student' column (missing work is 0)")
    e.add_argument("--assignment", action="append", help="an assignment's column (repeat; default: every graded one)")
    e.add_argument("--out", type=Path, help="the CSV file to write (default: GRADES/gradebook.csv)")
    e.set_defaults(fn=cmd_export, validate=check_export, parser=e)

    v = asub.add_parser("validate", parents=[common],
                        help="grade each assignment's solution copy; exit 1 unless every one earns every point")
    v.add_argument("names", nargs="*", help="assignments to validate (default: all)")
    v.set_defaults(fn=cmd_validate)

    g = asub.add_parser("grade", parents=[common], help="grade submitted notebooks, write JSON/CSV reports")
    g.add_argument("submissions", nargs="+", type=input_path,
                   help="submitted .ipynb files, or folders of them: collected/<student>/NN_name.ipynb or "
                        "collected/<student>.ipynb")
    g.add_argument("--assignment", help="assignment of the notebooks whose metadata and file name do not say")
    g.add_argument("--student", help="student name for a single submission (default: the folder or file name)")
    g.add_argument("--out", default="grades", type=output_dir,
                   help="report folder (default: ./grades; keep it out of any repository: it holds the hidden tests)")
    g.add_argument("--timeout", type=positive_float, default=60,
                   help="seconds one cell of the notebook, and one check, may run (default 60)")
    g.add_argument("--total-timeout", type=positive_float, default=300,
                   help="seconds the notebook's own cells may run in all, kernel start included (default 300); "
                        "the checks each have --timeout on top")
    g.add_argument("--roster", type=input_path,
                   help="CSV file with a 'student' column: a student without a file gets a row of 0, 'missing'")
    g.add_argument("--names", metavar="PLATFORM|REGEX",
                   help="read the student from the file name: canvas, moodle, or a regular expression with a group "
                        "(?P<student>...) (optional: (?P<file>...) the student's own file name, (?P<late>...))")
    g.add_argument("--deadline", type=deadline,
                   help="flag files modified after it: YYYY-MM-DD HH:MM (local time, or with a +HH:MM offset)")
    g.add_argument("--allow-reference", action="store_true",
                   help="give points to a function that uses or reaches the course's reference implementation "
                        "(flagged anyway)")
    g.add_argument("--no-isolation", action="store_true",
                   help="run the notebooks' kernels as yourself even as root (only for notebooks you trust; the "
                        "reports say so; also VRS_EDU_GRADE_ISOLATION=off)")
    g.add_argument("--memory-limit", metavar="GIB", type=positive_float, default=Limits.memory_bytes / (1 << 30),
                   help="memory of each process a notebook starts, in GiB (default %(default)g; isolated grading)")
    g.add_argument("--disk-limit", metavar="GIB", type=positive_float, default=Limits.disk_bytes / (1 << 30),
                   help="disk of each notebook's sandbox, in GiB (default %(default)g; isolated grading)")
    g.set_defaults(fn=cmd_grade, validate=check_grade, parser=g)
