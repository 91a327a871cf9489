"""Uniformity analysis for the block-vectorized executor (:mod:`.vectorgen`).

A value is *uniform* when every thread of a block has the same one: literals, arguments,
``blockIdx``/``blockDim``/``gridDim``, ``gridsize()``, and locals only ever assigned uniform
values under uniform control flow.  Everything else is *varying*: ``threadIdx``, ``grid()``,
anything read from memory (even at a uniform index: kept simple), and locals assigned a
varying value or assigned under varying control flow (an ``if``/``while``/``for`` whose
condition or range is varying).  :func:`varying_locals` computes the varying locals to a
fixpoint; :func:`is_varying` classifies one expression given them.
"""
import ast

from .. import types as T
from ..frontend.callkinds import CallKind, call_of
from ..frontend.nodeinfo import SpecialRegister

__all__ = ["Unsupported", "varying_locals", "is_varying", "UNIFORM_CALLS"]


class Unsupported(Exception):
    """The vector code generator does not handle a construct: the kernel runs per thread."""


#: Call kinds whose result is uniform when their arguments are.
UNIFORM_CALLS = frozenset((CallKind.CAST, CallKind.GRIDSIZE, CallKind.RANGE, CallKind.LEN,
                           CallKind.MIN, CallKind.MAX, CallKind.ABS, CallKind.NP_ROUNDING,
                           CallKind.MATH, CallKind.MATH_PARTS))


def is_varying(tf, node, varying, multi=False):
    """True when expression ``node`` of typed function ``tf`` may differ between the
    threads of a block, given ``varying`` (the set of varying local names); ``multi``:
    between the threads of several blocks run as one vector (``blockIdx`` varies too)."""
    uniform_regs = ("blockDim", "gridDim") if multi else ("blockIdx", "blockDim", "gridDim")
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in varying:
            return True
        info = tf.info.get(n)
        if isinstance(info, SpecialRegister):
            if info.register not in uniform_regs:
                return True
        elif isinstance(n, ast.Subscript) and isinstance(tf.typemap.get(n.value), T.Array):
            return True
        elif isinstance(n, ast.Call):
            c = call_of(tf, n)
            if c is None or c.kind not in UNIFORM_CALLS:
                return True
    return False


def _targets(t):
    return [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]


def varying_locals(tf, multi=False):
    """The set of local names of ``tf`` that are varying (to a fixpoint); ``multi`` as for
    :func:`is_varying`."""
    varying = set()
    body = tf.fsrc.node.body

    def walk(stmts, ctl):
        changed = False
        for s in stmts:
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                if s.value is None:
                    continue
                var = ctl or is_varying(tf, s.value, varying, multi)
                tgts = s.targets if isinstance(s, ast.Assign) else [s.target]
                if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                    var = var or s.target.id in varying
                for t in tgts:
                    if isinstance(t, ast.Subscript):
                        continue
                    for name in _targets(t):
                        if var and name not in varying and \
                                not isinstance(tf.vartypes.get(name), T.Array):
                            varying.add(name)
                            changed = True
            elif isinstance(s, ast.If):
                c = ctl or is_varying(tf, s.test, varying, multi)
                changed |= walk(s.body, c)
                changed |= walk(s.orelse, c)
            elif isinstance(s, ast.While):
                c = ctl or is_varying(tf, s.test, varying, multi)
                changed |= walk(s.body, c)
                changed |= walk(s.orelse, c)
            elif isinstance(s, ast.For):
                c = ctl or is_varying(tf, s.iter, varying, multi)
                for name in _targets(s.target):
                    if c and name not in varying:
                        varying.add(name)
                        changed = True
                changed |= walk(s.body, c)
                changed |= walk(s.orelse, c)
        return changed

    while walk(body, False):
        pass
    # a loop whose body makes a local varying can make the loop's own condition varying:
    # the outer ``while`` repeats until nothing changes
    return varying
