"""Commands declared on the methods that handle them, and the grammar and reference made from
those declarations.

A device class marks each handler with :func:`command` (the set form of a header) or
:func:`query` (its query form), giving the parameters, help text, an example and the errors
the handler can queue. :func:`declarations` gathers them into the grammar of
:mod:`firmware.commands` (one :class:`~firmware.commands.Spec` per header, naming its
handlers), :func:`bind` fixes the ranges that depend on one device (a
:class:`~firmware.commands.Bound`: its ports, channels, ...), and :func:`command_reference`
writes the Markdown reference. So a command is written once, on its handler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from firmware.commands import Param, Spec

#: Errors every command may put in the queue, for the reference.
COMMON_ERRORS = (
    "-101/-102/-103/-113/-150/-223/-363 for a malformed or too long line (nothing on the line "
    "runs); -104/-108/-109/-123/-124/-131/-141/-222/-223/-224 for a bad argument; -300 for a "
    "firmware fault (the exception named)"
)

Handler = TypeVar("Handler", bound=Callable[..., object])
#: How a command runs (:mod:`firmware.controller.session`): ``"device"``, under the device lock
#: from start to end; ``"overlapped"``, a long operation that lets the other sessions' commands
#: run between its steps; ``"session"``, on the calling client's session alone (its error
#: queue, its operation), without the device lock.
Execution = Literal["device", "overlapped", "session"]
#: What the reference says of each execution, after the forms.
_EXECUTION_NOTES = {"device": "", "overlapped": "; overlapped", "session": "; the client's own"}


@dataclass(frozen=True)
class Declaration:
    """One form (``"set"`` or ``"query"``) of a command, as declared on its handler."""

    form: Literal["set", "query"]
    header: str
    params: tuple[Param, ...]
    summary: str
    example: str
    reply: str = ""
    errors: str = ""
    execution: Execution = "device"


def _declare(declaration: Declaration) -> Callable[[Handler], Handler]:
    def mark(handler: Handler) -> Handler:
        handler.__dict__.setdefault("declarations", []).append(declaration)
        return handler

    return mark


def command(
    header: str,
    *params: Param,
    summary: str,
    example: str = "",
    errors: str = "",
    execution: Execution = "device",
) -> Callable[[Handler], Handler]:
    """Declare the decorated method as the handler of the set form of ``header``: it is called
    with the converted ``params``. ``errors``: what it queues when it cannot run (the
    reference adds :data:`COMMON_ERRORS`). One of a header's forms gives its ``example``.
    ``execution``: how it runs (:data:`Execution`)."""
    return _declare(
        Declaration("set", header, params, summary, example, errors=errors, execution=execution)
    )


def query(
    header: str,
    *params: Param,
    reply: str,
    summary: str = "",
    example: str = "",
    errors: str = "",
    execution: Execution = "device",
) -> Callable[[Handler], Handler]:
    """Declare the decorated method as the handler of the query form of ``header`` (called
    with the converted ``params``; it returns the reply, see :func:`format_reply`)."""
    return _declare(
        Declaration("query", header, params, summary, example, reply, errors, execution)
    )


def declarations(device: type) -> tuple[Spec, ...]:
    """The grammar declared on ``device``'s methods: one :class:`Spec` per header, in the order
    of the classes of its MRO and, within a class, of the methods; a form declared again lower
    in the MRO is overridden. Raises ``TypeError`` on a header declared in two spellings,
    without an example, or with forms that run differently (``execution``)."""
    forms: dict[str, dict[str, tuple[str, Declaration]]] = {}
    for klass in device.__mro__:
        for name, member in vars(klass).items():
            for d in getattr(member, "declarations", ()):
                by_form = forms.setdefault(d.header.upper(), {})
                if any(other.header != d.header for _, other in by_form.values()):
                    raise TypeError(f"{d.header!r} is declared in two spellings")
                by_form.setdefault(d.form, (name, d))
    specs = []
    for by_form in forms.values():
        (set_name, set_d), (query_name, query_d) = (
            by_form.get(form, ("", None)) for form in ("set", "query")
        )
        either = set_d or query_d
        assert either is not None
        if not any(d and d.example for d in (set_d, query_d)):
            raise TypeError(f"{either.header!r} is declared without an example")
        if set_d and query_d and set_d.execution != query_d.execution:
            raise TypeError(f"{either.header!r}: its set and query forms run differently")
        specs.append(
            Spec(
                either.header,
                set_d.params if set_d else (),
                set_d is not None,
                query_d is not None,
                " ".join(d.summary for d in (set_d, query_d) if d and d.summary),
                query_d.reply if query_d else "",
                (set_d and set_d.example) or (query_d and query_d.example) or "",
                query_d.params if query_d else (),
                "; ".join(d.errors for d in (set_d, query_d) if d and d.errors),
                set_name,
                query_name,
                either.execution,
            )
        )
    return tuple(specs)


def bind(grammar: Sequence[Spec], **sizes: float) -> tuple[Spec, ...]:
    """``grammar`` with every :class:`Bound` resolved against the device's ``sizes``."""
    return tuple(
        replace(
            spec,
            params=tuple(p.bound(sizes) for p in spec.params),
            query_params=tuple(p.bound(sizes) for p in spec.query_params),
        )
        for spec in grammar
    )


def command_reference(grammar: Sequence[Spec], intro: str) -> str:
    """The command reference (Markdown) of ``grammar``: every command, its arguments with
    ranges and units, its reply, the errors it can raise and an example."""
    lines = [intro.rstrip(), "", f"Errors of every command: {COMMON_ERRORS}.", ""]
    for spec in grammar:
        forms = (["set"] if spec.settable else []) + (["query"] if spec.queryable else [])
        note = _EXECUTION_NOTES[spec.execution]
        lines += [f"## `{spec.header}`", "", f"{spec.summary} ({', '.join(forms)}{note})", ""]
        if spec.settable and spec.params:
            lines += [f"- `{p.name}`: {p.describe()}" for p in spec.params]
        if spec.queryable and spec.query_params:
            lines += [f"- query `{p.name}`: {p.describe()}" for p in spec.query_params]
        if spec.queryable:
            lines.append(f"- reply: `{spec.reply}`")
        if spec.errors:
            lines.append(f"- errors: {spec.errors}")
        lines += ["", f"Example: `{spec.example}`", ""]
    return "\n".join(lines)
