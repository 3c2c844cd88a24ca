"""A synthetic lab class for the integrity report's similarity, at any size: each student writes four of the lab's
questions (c1 softmax and c2 additive attention in NumPy, c3 scaled dot-product attention and c6 a key/value
cache in PyTorch) under the real starter (signature and docstring, from course/lab), and a few copy.

An honest answer is drawn step by step, each step one of several ways to write it (the textbook way the
likeliest), wrong ways among them (the course's mutants: no max shift, the whole array's sum, no tanh, the
mask read backwards, scaled by d, …), with the student's own names, comments and blank lines, and independent
statements in either order. A planted copy takes another student's answer and renames every variable,
reorders its independent statements and adds comments of its own (some copy a copy). A few students leave
the starter as given. The same seed gives the same class.

Also the oracle the index is held to: ``all_pairs_similar``, copydetect on every pair, as the report did.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from itertools import combinations

from attn_ref.grade.classroom.similarity import THRESHOLD, compared, fingerprinted, most_similar_first

# A step: its ways, each (weight, lines). In a line, {name} is a local variable the student names; a line
# "@group" before steps makes them one group of statements in any order.
Way = tuple[int, str]

SOFTMAX = (
    [(3, ""), (1, "if axis < 0:\n    axis += x.ndim"), (1, "axis = axis % x.ndim"), (1, "assert x.ndim >= 1")],
    [(3, ""), (2, "{X} = np.asarray(x)"), (1, "{X} = np.array(x, dtype=x.dtype, copy=True)"),
     (1, "if x.size == 0:\n    return np.empty_like(x)\n{X} = x")],
    [(3, "{m} = np.max({X}, axis=axis, keepdims=True)"), (3, "{m} = {X}.max(axis=axis, keepdims=True)"),
     (2, "{m} = np.amax({X}, axis=axis, keepdims=True)"), (1, "{m} = np.expand_dims(np.max({X}, axis=axis), axis)"),
     (2, "{m} = np.max({X}, axis, keepdims=True)"), (1, "{m} = np.max({X})"), (1, "{m} = 0.0")],
    [(3, "{z} = {X} - {m}\n{e} = np.exp({z})"), (3, "{e} = np.exp({X} - {m})"), (1, "{e} = np.exp(np.subtract({X}, {m}))"),
     (1, "{z} = np.subtract({X}, {m}, dtype=np.float64)\n{e} = np.exp({z}).astype({X}.dtype)")],
    [(3, ""), (1, "assert np.all(np.isfinite({e}))"), (1, "{e} = np.where(np.isfinite({e}), {e}, 0.0)"), (1, "{e} = {e}.astype(x.dtype)")],
    [(3, "{s} = np.sum({e}, axis=axis, keepdims=True)"), (3, "{s} = {e}.sum(axis=axis, keepdims=True)"),
     (1, "{s} = np.add.reduce({e}, axis=axis, keepdims=True)"), (2, "{s} = {e}.sum(axis, keepdims=True)"),
     (1, "{s} = {e}.sum()"), (1, "{s} = {e}.sum(axis=-1, keepdims=True)")],
    [(3, "return {e} / {s}"), (2, "{out} = {e} / {s}\nreturn {out}"), (1, "return np.divide({e}, {s})"),
     (1, "{e} /= {s}\nreturn {e}"), (1, "{out} = {e} / {s}\nassert np.allclose({out}.sum(axis=axis), 1.0)\nreturn {out}")],
)
ADDITIVE = (
    [(3, ""), (1, "query = np.asarray(query, dtype=keys.dtype)"), (1, "assert W_q.shape[1] == query.shape[0]"),
     (1, "{T} = keys.shape[0]")],
    "@group",
    [(3, "{qp} = W_q @ query"), (2, "{qp} = np.dot(W_q, query)"), (2, "{qp} = query @ W_q.T"),
     (1, "{qp} = np.matmul(W_q, query)"), (1, "{qp} = np.einsum('aq,q->a', W_q, query)")],
    [(3, "{kp} = keys @ W_k.T"), (2, "{kp} = np.dot(keys, W_k.T)"), (2, "{kp} = (W_k @ keys.T).T"),
     (1, "{kp} = np.einsum('ak,tk->ta', W_k, keys)"), (1, "{kp} = np.stack([W_k @ {h} for {h} in keys])")],
    "@end",
    [(3, "{e} = np.tanh({qp} + {kp}) @ v"), (2, "{e} = np.tanh({kp} + {qp}[None, :]) @ v"),
     (2, "{e} = np.dot(np.tanh({qp} + {kp}), v)"), (2, "{a} = np.tanh({qp} + {kp})\n{e} = {a} @ v"),
     (1, "{e} = np.array([v @ np.tanh({qp} + {h}) for {h} in {kp}])"), (1, "{e} = ({qp} + {kp}) @ v")],
    [(3, "{w} = softmax({e})"), (2, "{w} = softmax({e}, axis=-1)"), (2, "{w} = np.exp({e} - {e}.max())\n{w} = {w} / {w}.sum()"),
     (1, "{w} = softmax({e}, axis=0)"), (1, "{w} = np.ones_like({e}) / len({e})")],
    [(3, "{c} = {w} @ keys"), (2, "{c} = np.dot({w}, keys)"), (2, "{c} = ({w}[:, None] * keys).sum(axis=0)"),
     (1, "{c} = np.sum({w}[:, np.newaxis] * keys, axis=0)"), (1, "{c} = np.einsum('t,tk->k', {w}, keys)")],
    [(3, ""), (1, "assert np.isclose({w}.sum(), 1.0)"), (1, "assert {c}.shape == keys.shape[1:]")],
    [(4, "return {c}, {w}"), (1, "return ({c}, {w})"), (1, "{c} = {c}.astype(keys.dtype)\nreturn {c}, {w}")],
)
ATTENTION = (
    [(3, ""), (1, "if mask is not None and mask.dtype != torch.bool:\n    mask = mask.bool()"),
     (1, "assert q.shape[-1] == k.shape[-1]")],
    [(3, "{d} = q.shape[-1]"), (2, "{d} = q.size(-1)"), (1, "{d} = k.shape[-1]"), (1, "*_, {d} = q.shape")],
    [(3, "{s} = q @ k.transpose(-2, -1) / math.sqrt({d})"), (2, "{s} = torch.matmul(q, k.transpose(-2, -1)) / {d} ** 0.5"),
     (1, "{s} = (q @ k.mT) * {d} ** -0.5"), (1, "{s} = torch.einsum('...qd,...kd->...qk', q, k) / math.sqrt({d})"),
     (1, "{s} = q.matmul(k.transpose(-1, -2)) / torch.sqrt(torch.tensor({d}, dtype=q.dtype, device=q.device))"),
     (1, "{s} = q @ k.transpose(-2, -1) / {d}"), (1, "{s} = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])")],
    [(3, ""), (1, "{s} = {s}.to(q.dtype)"), (1, "{s} = {s} - {s}.amax(dim=-1, keepdim=True).detach()")],
    [(3, "if mask is not None:\n    {s} = {s}.masked_fill(~mask, float('-inf'))"),
     (2, "if mask is not None:\n    {s} = {s}.masked_fill(mask == 0, -torch.inf)"),
     (1, "if mask is not None:\n    {s} = torch.where(mask, {s}, torch.full_like({s}, float('-inf')))"),
     (1, "if mask is not None:\n    {s} = {s}.masked_fill(torch.logical_not(mask), -math.inf)"),
     (1, "if mask is not None:\n    {s} = {s}.masked_fill(~mask, -1e9)"),
     (1, "if mask is not None:\n    {s} = {s}.masked_fill(mask, float('-inf'))")],
    [(3, "{w} = torch.softmax({s}, dim=-1)"), (2, "{w} = F.softmax({s}, dim=-1)"), (2, "{w} = {s}.softmax(dim=-1)"),
     (1, "{mx} = {s}.amax(dim=-1, keepdim=True)\n{ex} = torch.exp({s} - {mx})\n{w} = {ex} / {ex}.sum(dim=-1, keepdim=True)"),
     (1, "{w} = torch.softmax({s}, dim=-2)")],
    [(4, "{w} = {w}.nan_to_num(0.0)"), (2, "{w} = torch.nan_to_num({w}, nan=0.0)"),
     (1, "{w} = torch.where(torch.isnan({w}), torch.zeros_like({w}), {w})"), (2, "")],
    [(3, "return {w} @ v, {w}"), (2, "{o} = torch.matmul({w}, v)\nreturn {o}, {w}"), (2, "{o} = {w} @ v\nreturn {o}, {w}"),
     (1, "return torch.einsum('...qk,...kd->...qd', {w}, v), {w}")],
)
KV_CACHE = (
    [(3, "{ks}, {vs}, {os} = [], [], []"), (2, "{ks} = []\n{vs} = []\n{os} = []"),
     (1, "{ks}: list = []\n{vs}: list = []\n{os}: list = []")],
    [(3, ""), (1, "assert x.dim() >= 2"), (1, "{B} = x.shape[:-2]")],
    [(3, "for {t} in range(x.shape[-2]):"), (2, "for {t} in range(x.size(-2)):"), (1, "{T} = x.shape[-2]\nfor {t} in range({T}):"),
     (1, "for {t} in range(1, x.shape[-2]):")],
    [(3, "    {xt} = x[..., {t} : {t} + 1, :]"), (2, "    {xt} = x[..., [{t}], :]"), (1, "    {xt} = x.narrow(-2, {t}, 1)"),
     (2, "    {xt} = x[..., {t}, :].unsqueeze(-2)")],
    "@group",
    [(3, "    {ks}.append({xt} @ W_k)"), (2, "    {ks}.append(torch.matmul({xt}, W_k))"), (1, "    {ks} += [{xt} @ W_k]")],
    [(3, "    {vs}.append({xt} @ W_v)"), (2, "    {vs}.append(torch.matmul({xt}, W_v))"), (1, "    {vs} += [{xt} @ W_v]")],
    [(3, "    {qt} = {xt} @ W_q"), (2, "    {qt} = torch.matmul({xt}, W_q)"), (1, "    {qt} = ({xt} @ W_q).contiguous()")],
    "@end",
    [(3, "    {o}, _ = scaled_dot_product_attention({qt}, torch.cat({ks}, dim=-2), torch.cat({vs}, dim=-2))"),
     (2, "    {K} = torch.cat({ks}, dim=-2)\n    {V} = torch.cat({vs}, dim=-2)\n    {o}, _ = scaled_dot_product_attention({qt}, {K}, {V})"),
     (1, "    {o} = scaled_dot_product_attention({qt}, torch.cat({ks}, -2), torch.cat({vs}, -2))[0]"),
     (1, "    {K} = torch.cat({ks}, dim=-2)\n    {a} = torch.softmax({qt} @ {K}.transpose(-2, -1) / math.sqrt({qt}.shape[-1]), dim=-1)\n"
         "    {o} = {a} @ torch.cat({vs}, dim=-2)"),
     (1, "    {o}, _ = scaled_dot_product_attention({qt}, x @ W_k, x @ W_v)")],
    [(3, "    {os}.append({o})"), (2, "    {os} += [{o}]"), (1, "    {os}.append({o}.clone())")],
    [(3, "return torch.cat({os}, dim=-2)"), (2, "return torch.cat({os}, -2)"), (1, "{r} = torch.cat({os}, dim=-2)\nreturn {r}")],
)
QUESTIONS = {"c1": SOFTMAX, "c2": ADDITIVE, "c3": ATTENTION, "c6": KV_CACHE}
NAMES = {slot: tuple(names.split()) for slot, names in (line.split(":") for line in """
X: arr x_arr a data inp xs
m: m mx x_max top biggest peak
z: z shifted centered diff y stable
e: e exps ex numer exp_x scores
s: s total denom norm sums z_sum
out: out result probs res p soft
qp: q_proj wq qq a_q query_part left
kp: k_proj wk kk a_k keys_part right
h: h key row k_i state hi
a: a act hidden t_h energy u
w: weights alpha attn w probs p_attn
c: context ctx c summary out result
d: d_k d dk dim head_dim n
mx: row_max mx m top mval peak
ex: ex exp_s num e unnorm raw
o: out output o res y attended
ks: keys k_cache cache_k past_k kc key_list
vs: values v_cache cache_v past_v vc val_list
os: outputs outs results ys steps out_list
t: t i step pos idx j
T: T n_tokens seq_len length L steps_total
xt: x_t tok xi cur token x_step
qt: q_t query qi q_cur q_step qq
K: K all_k k_all keys_so_far kk k_mat
V: V all_v v_all values_so_far vv v_mat
r: result res out y stacked final
B: batch lead B prefix dims outer
""".strip().split("\n"))}  # slot: the names students give it
COMMENTS = ("# subtract the max for stability", "# shape check", "# (..., T, T)", "# normalise", "# compute the scores",
            "# TODO: check this again", "# from the lecture", "# broadcast over the batch", "# my approach",
            "# avoid overflow", "# this took me a while", "# equation (3) in the notes", "# cache the keys", "# step by step",
            "# NOTE: works for any axis", "# mask first, then softmax")


@dataclass
class Answer:
    """One student's answer to one question, as drawn: the way of each step, in order, and the names."""

    ways: list[tuple[int, int]]  # (step, way), in the order written
    names: dict[str, str]


@dataclass
class Class:
    starters: dict[str, str]  # per question
    codes: dict[str, dict[str, str]]  # per question: submission key -> the code of its cell
    copies: list[tuple[str, str, str]] = field(default_factory=list)  # (question, copied from, copy)


def _steps(question) -> tuple[list, list[list[int]]]:
    """The question's steps and its groups of steps (each of one step, or of several in any order)."""
    steps, groups, open_group = [], [], None
    for item in question:
        if item == "@group":
            open_group = []
        elif item == "@end":
            groups.append(open_group)
            open_group = None
        else:
            steps.append(item)
            if open_group is None:
                groups.append([len(steps) - 1])
            else:
                open_group.append(len(steps) - 1)
    return steps, groups


def _names(rng: random.Random, avoid: dict[str, str] | None = None) -> dict[str, str]:
    names, used = {}, set()
    for slot, pool in NAMES.items():
        fresh = [n for n in pool if n not in used and (avoid is None or n != avoid.get(slot))]
        names[slot] = rng.choice(fresh) if fresh else f"{pool[0]}_{len(used)}"
        used.add(names[slot])
    return names


def _draw(rng: random.Random, question) -> Answer:
    steps, groups = _steps(question)
    ways = {i: rng.choices(range(len(step)), weights=[w for w, _ in step])[0] for i, step in enumerate(steps)}
    order = [step for group in groups for step in rng.sample(group, len(group))]
    return Answer([(step, ways[step]) for step in order], _names(rng))


def _copy(rng: random.Random, question, source: Answer) -> Answer:
    """The same ways, every variable renamed, two independent statements swapped where a group has three or more:
    two swapped statements of a six-line function, or a loop's body shuffled, are another function to copydetect too."""
    _, groups = _steps(question)
    ways = list(source.ways)
    movable = [group for group in groups if len(group) >= 3]
    if movable:
        at = [i for i, (step, _) in enumerate(ways) if step in rng.choice(movable)]
        i = rng.randrange(len(at) - 1)
        ways[at[i]], ways[at[i + 1]] = ways[at[i + 1]], ways[at[i]]
    return Answer(ways, _names(rng, avoid=source.names))


def render(rng: random.Random, question, answer: Answer, header: str) -> str:
    steps, _ = _steps(question)
    lines = []
    for step, way in answer.ways:
        text = steps[step][way][1].format(**answer.names)
        if not text:
            continue
        body = text.split("\n")
        indent = " " * (4 + len(body[0]) - len(body[0].lstrip()))
        if rng.random() < 0.25:
            lines.append(indent + rng.choice(COMMENTS))
        if rng.random() < 0.12:
            body[-1] += "  " + rng.choice(COMMENTS)
        lines += ["    " + line for line in body]
        if rng.random() < 0.12:
            lines.append("")
    return header + "\n".join(lines) + "\n"


@cache
def starters() -> dict[str, str]:
    """Each question's starter, as the report gets it (checks.json, built from course/lab)."""
    from course_units import assignment

    from attn_ref.release.hidden_checks import checks

    return {u.name: u.starter for u in checks(assignment("lab")).units if u.name in QUESTIONS}


def _header(starter: str) -> str:
    """The starter less its "...": where a student starts writing."""
    return starter[:starter.rindex("    ...")]


def make_class(n: int, seed: int = 0, copy_share: float = 0.06, blank_share: float = 0.03) -> Class:
    """n students (keys s0000 …) answering every question; about copy_share of them copy each question."""
    rng = random.Random(seed)
    found = Class(starters(), {q: {} for q in QUESTIONS})
    for q, question in QUESTIONS.items():
        header = _header(found.starters[q])
        answers: dict[str, Answer] = {}
        for i in range(n):
            key = f"s{i:04d}"
            if rng.random() < blank_share:
                found.codes[q][key] = found.starters[q] + "\n"
                continue
            if answers and rng.random() < copy_share:
                source = rng.choice(sorted(answers))
                answers[key] = _copy(rng, question, answers[source])
                found.copies.append((q, source, key))
            else:
                answers[key] = _draw(rng, question)
            found.codes[q][key] = render(rng, question, answers[key], header)
    return found


def written_alike(question: str, n: int, seed: int = 0) -> dict[str, str]:
    """n students who each wrote the question the likeliest way (the textbook's), with their own names and comments."""
    rng = random.Random(seed)
    steps, _ = _steps(QUESTIONS[question])
    ways = [(i, max(range(len(step)), key=lambda w: step[w][0])) for i, step in enumerate(steps)]
    header = _header(starters()[question])
    return {f"t{i:02d}": render(rng, QUESTIONS[question], Answer(ways, _names(rng)), header) for i in range(n)}


def all_pairs_similar(codes: dict[str, str], starter: str, threshold: float = THRESHOLD) -> list[tuple]:
    """The oracle: copydetect on every pair of submissions, as the report measured before its index."""
    prints = fingerprinted(codes, starter)
    pairs = (compared(prints, a, b, threshold) for a, b in combinations(sorted(prints), 2))
    return most_similar_first([p for p in pairs if p])


def in_styles(question: str, n: int, styles: int = 9, seed: int = 0, copy_share: float = 0.06) -> Class:
    """n students answering one question, each in one of ``styles`` ways of writing it (drawn once), with their own
    names, comments and blank lines: most pairs alike, as a class's three-line functions are; about copy_share of
    them copy a classmate (renamed, two statements swapped)."""
    rng = random.Random(seed)
    found = Class(starters(), {question: {}})
    header = _header(found.starters[question])
    ways = [_draw(rng, QUESTIONS[question]).ways for _ in range(styles)]
    answers: dict[str, Answer] = {}
    for i in range(n):
        key = f"s{i:04d}"
        if answers and rng.random() < copy_share:
            source = rng.choice(sorted(answers))
            answers[key] = _copy(rng, QUESTIONS[question], answers[source])
            found.copies.append((question, source, key))
        else:
            answers[key] = Answer(list(rng.choice(ways)), _names(rng))
        found.codes[question][key] = render(rng, QUESTIONS[question], answers[key], header)
    return found
