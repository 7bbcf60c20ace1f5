"""Small plays in the Project Gutenberg layout, generated for the Shakespeare loader tests."""


def make_play(rng, title, n_roles, names=None):
    """One play with ``n_roles`` speakers and random speeches; the first speaker has a single block."""
    names = names or [f"ROLE {chr(65 + i)}{chr(65 + j)}" for i in range(6) for j in range(6)][:n_roles]
    out = [title.upper(), "", "by William Shakespeare", "", "", "ACT I.", "", "Scene I. Somewhere.", ""]
    blocks_left = {nm: int(rng.integers(3, 12)) for nm in names}
    blocks_left[names[0]] = 1  # a role with a single block: dropped
    words = "thou art the sun and moon my lord good sir whence comest thou hither anon".split()
    k = 0
    while any(blocks_left.values()):
        live = [nm for nm in names if blocks_left[nm]]
        nm = live[int(rng.integers(len(live)))]
        blocks_left[nm] -= 1
        k += 1
        speech = " ".join(rng.choice(words, size=int(rng.integers(8, 40)))).capitalize() + f" {k}."
        out += [nm + ".", speech[: len(speech) // 2], speech[len(speech) // 2 :], ""]
        if k % 7 == 0:
            out += ["[Exit " + nm.title() + ".]", ""]
    return "\n".join(out) + "\n"
