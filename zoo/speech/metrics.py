"""Error rates of transcripts: edit distance, character and word error rates.

Both rates are corpus-level, as speech papers report them: the edits of all
utterances summed, divided by the length of all references summed, so a long
utterance weighs more than a short one (not a mean of per-utterance rates).
"""


def edit_distance(reference, hypothesis):
    """Levenshtein distance: fewest substitutions, insertions and deletions.

    Args:
        reference: A sequence (a str compares characters, a list compares
            its items, e.g. words).
        hypothesis: A sequence of the same kind.

    Returns:
        The number of edits (int) that turn ``reference`` into ``hypothesis``.
    """
    reference, hypothesis = list(reference), list(hypothesis)
    # One row of the dynamic-programming table at a time: previous[j] is the
    # distance between the reference read so far and hypothesis[:j].
    previous = list(range(len(hypothesis) + 1))
    for i, expected in enumerate(reference, start=1):
        current = [i]
        for j, written in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1,               # reference item deleted
                               current[j - 1] + 1,            # hypothesis item inserted
                               previous[j - 1] + (expected != written)))
        previous = current
    return previous[-1]


def _pairs(references, hypotheses):
    """Equal-length lists of strings from one string each or two lists."""
    if isinstance(references, str) and isinstance(hypotheses, str):
        return [references], [hypotheses]
    if isinstance(references, str) or isinstance(hypotheses, str):
        raise TypeError('references and hypotheses must both be strings or both be lists '
                        f'of strings, got {type(references).__name__} and '
                        f'{type(hypotheses).__name__}')
    references, hypotheses = list(references), list(hypotheses)
    if len(references) != len(hypotheses):
        raise ValueError(f'got {len(references)} references but {len(hypotheses)} hypotheses')
    for text in references + hypotheses:
        if not isinstance(text, str):
            raise TypeError(f'transcripts must be strings, got {text!r}')
    return references, hypotheses


def _error_rate(pairs, split, unit):
    edits = sum(edit_distance(split(reference), split(hypothesis))
                for reference, hypothesis in zip(*pairs))
    total = sum(len(split(reference)) for reference in pairs[0])
    if total == 0:
        # Nothing to recognise: no error when nothing was written either; any
        # output is all insertions, with no finite rate to report.
        if edits == 0:
            return 0.0
        raise ValueError(f'the references have no {unit}s, so the error rate of '
                         f'{edits} inserted {unit}s is undefined')
    return edits / total


def cer(references, hypotheses):
    """Character error rate: total character edits / total reference characters.

    Characters are compared as given (spaces count; no normalisation).

    Args:
        references: A string, or a list of strings.
        hypotheses: A string, or a list of as many strings.

    Returns:
        A float, 0 for a perfect transcript; it can exceed 1 with insertions.

    Raises:
        ValueError: If the lists' lengths differ, or the references are all
            empty while a hypothesis is not (the rate is then undefined; all
            empty on both sides gives 0).
        TypeError: If a transcript is not a string.
    """
    return _error_rate(_pairs(references, hypotheses), list, 'character')


def wer(references, hypotheses):
    """Word error rate: total word edits / total reference words.

    Words are the whitespace-separated pieces of each transcript.

    Args:
        references: A string, or a list of strings.
        hypotheses: A string, or a list of as many strings.

    Returns:
        A float, 0 for a perfect transcript; it can exceed 1 with insertions.

    Raises:
        ValueError: If the lists' lengths differ, or the references have no
            words while a hypothesis has some (all empty gives 0).
        TypeError: If a transcript is not a string.
    """
    return _error_rate(_pairs(references, hypotheses), str.split, 'word')
