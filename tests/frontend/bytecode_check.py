"""Decompile plain-Python functions with cujit's bytecode front end and run the rebuilt
functions against the originals: a script (standard library only, no cujit import) so that
it runs under every CPython on the machine (``test_bytecode_versions.py``).  Prints one line
per function and ``OK <n>`` when all agree; exits 1 on the first difference."""
import ast
import importlib.util
import pathlib
import sys
import types

_PKG = pathlib.Path(__file__).resolve().parents[2] / "cujit" / "frontend"


def _load():
    pkg = types.ModuleType("_cjbc")
    pkg.__path__ = [str(_PKG)]
    sys.modules["_cjbc"] = pkg
    for name in ("errors", "bytecode"):
        spec = importlib.util.spec_from_file_location(f"_cjbc.{name}", _PKG / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[f"_cjbc.{name}"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["_cjbc.bytecode"]


class Box:
    def __init__(self):
        self.y = 1.5

    def __repr__(self):
        return f"Box({self.y})"


def f_arith(a, b):
    c = a * b + a // (b + 1) - a % 3
    c += 2
    c -= b
    c *= 2
    c <<= 1
    return -c if c > 0 else ~c


def f_loops(n, step):
    t = 0
    for i in range(n, 0, -1):
        t += i
    for i in range(2, 100, 3):
        if i == 5:
            continue
        if i > 20:
            break
        t += i
    else:
        t = -1
    k = 0
    while k < n:
        k += 3
    else:
        k += 100
    return t, i, k


def f_while_continue(a):
    i = 0
    s = 0
    while i < len(a):
        if a[i] > 0 and s < 100:
            i += 1
            continue
        s += a[i]
        i += 1
    return s


def f_bool(a, b, c):
    x = a and b
    y = a or b or c
    z = (a and b) or c
    w = not a
    if a and (b or c):
        r = 1
    elif not b or c:
        r = 2
    else:
        r = 3
    return x, y, z, w, r


def f_chain(a, b, c):
    if a < b < c:
        r = 1
    else:
        r = 0
    v = a < b <= c
    return r, v, 0 <= a < 10


def f_subscript(a, i, j):
    a[i] += 1
    a[i, j] = a[j, i] * 2 if i != j else 7
    a[0:2, 1] = 5
    b = a[1:, :2]
    return a[i, j], b[0, 0], a[-1, ::2][0]


def f_attr(o, t):
    o.y += 2
    p, q = t
    p, q = q, p
    (u, v), w = (p, q), 3
    return o.y, p, q, u, v, w


def f_calls(x):
    return max(x, 3), min(1, 2, x), round(x, ndigits=1), abs(-x), divmod(x, 3)


def _count_args(*args):
    return len(args), sum(args)


def f_many_args(r):
    # 33 arguments: CPython collects them with BUILD_LIST / LIST_APPEND / LIST_TO_TUPLE
    # and CALL_FUNCTION_EX (print's too-many-arguments case in numba-cuda's test_print)
    return _count_args(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                       r[11], r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20],
                       r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30],
                       r[31], r[32])


def f_early(n):
    for i in range(n):
        if i * i > n:
            return i
    return -1


def f_nested_loops(n):
    t = 0
    for i in range(n):
        j = 0
        while True:
            j += 1
            if j > i:
                break
            if j % 2:
                continue
            t += j
    return t


def f_is_in(a, b):
    r = 0
    if a is None:
        r += 1
    if b is not None and b in (1, 2, 3):
        r += 2
    if a not in (4, 5):
        r += 4
    return r


def f_assert(x):
    assert x > 0, "x must be positive"
    assert x < 100
    return x


def f_closure(n):
    k = 3

    def inner(v, d=2):
        return v * k + d
    g = lambda q: q + k  # noqa: E731
    return inner(n) + g(1)


def f_defaults(a, b=2, c=None):
    if c is None:
        c = 4
    return a + b + c


def f_ternary_nested(a, b):
    return (a if a > b else b) if a != 0 else (-b if b else 0)


def f_while_compound(n, m):
    i = 0
    while i < n and i < m:
        i += 1
    return i


def f_swap(a, b):
    a, b = b, a
    return a - b


def f_unpack_for(pairs):
    t = 0
    for i, (a, b) in enumerate(pairs):
        t += i * a - b
    return t


def f_slices(a, i):
    b = a[1:3] + a[::2] + a[i:]
    a[1:3] = [7, 8]
    a[i] -= 1
    return b, a[-1]


def f_guarded(i, j, n, out):
    if 0 < i < n - 1 and 0 < j < n - 1:
        out.append(i * j)
    for k in range(n):
        if k >= 0 and k < i:
            out.append(k)
    return out


def f_fstrings(x, w):
    return f"x={x}", f"{x!r:>{w}}|{x:.2f}", f"{x}{w}", f"{'s'!s}"


def _axpy(a, x, y=0.0, scale=1.0):
    return (a * x + y) * scale


def _total(*args):
    t = 0
    for v in args:
        t += v
    return t


def f_star_calls(t):
    return _axpy(*t), _axpy(1.0, *(2.0,), scale=3), _total(*t, 10.0), _total(1, *t, *t)


def f_while_compound3(v, n):
    steps = 0
    while v != 1 and v > 0 and steps < n:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    return steps, v


def f_while_or(a, b):
    k = 0
    while a > 0 or b > 0:
        a -= 1
        b -= 2
        k += 1
    return k


def _bump(log):
    log.append(len(log))
    return len(log)


def f_chained_assign(log):
    a = b = _bump(log)
    p, q, r = b, a * 2, _bump(log)
    p, q = q, p
    return a, b, p, q, r, log


def f_kwonly(x):
    def inner(v, *, k=2):
        return v * k
    return inner(x), inner(x, k=3)


def f_call_and_value(log, v):
    r = _bump(log) and v > -1.0
    q = 0 < _bump(log) < 100
    return r, q, log


CASES = [
    (f_call_and_value, [([], 2.0), ([], -5.0)]),
    (f_kwonly, [(4,)]),
    (f_chained_assign, [([],), ([7],)]),
    (f_while_compound3, [(27, 200), (27, 10), (1, 5), (-3, 5)]),
    (f_while_or, [(3, 9), (0, 0), (5, 1)]),
    (f_star_calls, [((2.0, 1.5, 1.0),)]),
    (f_fstrings, [(1.25, 8), (3, 2)]),
    (f_guarded, [(1, 2, 4, []), (0, 2, 4, []), (2, 3, 4, []), (3, 1, 5, [])]),
    (f_slices, [([1, 2, 3, 4, 5], 2)]),
    (f_arith, [(3, 4), (-7, 2), (0, 0)]),
    (f_loops, [(10, 3), (1, 1), (30, 7)]),
    (f_while_continue, [([1, -2, 3, -4, 0],), ([],)]),
    (f_bool, [(a, b, c) for a in (0, 1) for b in (0, 2) for c in (0, 3)]),
    (f_chain, [(1, 2, 3), (3, 2, 1), (1, 2, 2), (11, 12, 13)]),
    (f_attr, [(Box(), (1, 2))]),
    (f_calls, [(2.26,), (5,)]),
    (f_many_args, [(list(range(33)),), (list(range(5, 38)),)]),
    (f_early, [(10,), (0,)]),
    (f_nested_loops, [(6,)]),
    (f_is_in, [(None, 2), (4, None), (1, 7)]),
    (f_assert, [(5,), (-1,), (200,)]),
    (f_closure, [(4,)]),
    (f_defaults, [(1,), (1, 5), (1, 5, 6)]),
    (f_ternary_nested, [(1, 2), (3, 2), (0, 5), (0, 0)]),
    (f_while_compound, [(5, 3), (2, 9)]),
    (f_swap, [(1, 5)]),
    (f_unpack_for, [([(1, 2), (3, 4)],)]),
]


# functions whose rebuilt tree reads as their source on every supported CPython (the forms
# the clean-up pass restores: while tests, assert, guard clauses, chained comparisons ...)
FORMS = ["f_assert", "f_call_and_value", "f_calls", "f_closure", "f_defaults", "f_early",
         "f_fstrings", "f_is_in", "f_kwonly", "f_nested_loops", "f_slices", "f_star_calls",
         "f_unpack_for", "f_while_compound", "f_while_compound3", "f_while_or"]


def _same_form(bc, f):
    import inspect
    import textwrap
    src = ast.parse(textwrap.dedent(inspect.getsource(f))).body[0]
    got = bc.decompile(f)
    src.args.defaults = got.args.defaults = []      # values, not expressions, from bytecode
    return ast.unparse(got), ast.unparse(src)


def _array_case():
    import numpy as np
    return [(f_subscript, [(np.arange(9.0).reshape(3, 3), 0, 1),
                           (np.arange(9.0).reshape(3, 3), 2, 2)])]


def rebuild(bc, f):
    """``f`` rebuilt from its bytecode: the decompiled tree compiled and run."""
    tree = bc.decompile(f)
    src = ast.unparse(tree)
    ns = dict(f.__globals__)
    cells = f.__closure__ or ()
    env = {n: c.cell_contents for n, c in zip(f.__code__.co_freevars, cells)}
    ns.update(env)
    exec(compile(ast.Module(body=[tree], type_ignores=[]), "<rebuilt>", "exec"), ns)
    g = ns[tree.name]
    g.__defaults__ = f.__defaults__
    return g, src


def _outcome(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:          # the rebuilt function must fail the same way
        return ("raise", type(e).__name__, str(e))


def main():
    bc = _load()
    cases = list(CASES)
    try:
        cases += _array_case()
    except ImportError:
        pass
    n = 0
    for f, arglists in cases:
        g, src = rebuild(bc, f)
        for args in arglists:
            import copy
            a1, a2 = copy.deepcopy(args), copy.deepcopy(args)
            want, got = _outcome(f, a1), _outcome(g, a2)
            if repr(want) != repr(got) or repr(a1) != repr(a2):
                print(f"MISMATCH {f.__name__}{args}: {want} != {got}\n{src}")
                return 1
            n += 1
        print(f"{f.__name__}: ok")
    for name in FORMS:
        got, want = _same_form(bc, globals()[name])
        if got != want:
            print(f"FORM {name}: the rebuilt tree\n{got}\nis not the source\n{want}")
            return 1
    print(f"forms: {len(FORMS)} read as their source")
    print(f"OK {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
