"""Every quiz question of every built lesson: 2 to 5 options, exactly one marked right, every
option with its feedback, and an explanation (the rules of the ``quiz_question`` macro)."""
from __future__ import annotations

import re


import build
from sitebuild import render

QUESTION = re.compile(r'<fieldset class="quiz-question" data-testid="quiz-question" id="([^"]+)">(.*?)</fieldset>', re.S)


def quiz_faults(html: str) -> list[str]:
    faults, ids = [], []
    for qid, body in QUESTION.findall(html):
        ids.append(qid)
        options = body.count('data-testid="quiz-option"')
        right = body.count('data-correct="true"')
        feedbacks = re.findall(r'<template class="quiz-option-feedback">(.*?)</template>', body, re.S)
        if not 2 <= options <= 5:
            faults.append(f"{qid}: {options} options")
        if right != 1:
            faults.append(f"{qid}: {right} right options")
        if len(feedbacks) != options or any(not f.strip() for f in feedbacks):
            faults.append(f"{qid}: an option without feedback")
        if 'data-testid="quiz-explanation"' not in body:
            faults.append(f"{qid}: no explanation")
    faults += [f"{qid}: the id appears twice" for qid in set(ids) if ids.count(qid) > 1]
    return faults


def test_the_checker_finds_a_question_with_two_right_options():
    option = ('<div class="quiz-option" data-testid="quiz-option"{}><template class="quiz-option-feedback">'
              'Sí.</template></div>')
    right = option.format(' data-correct="true"')
    good = (f'<fieldset class="quiz-question" data-testid="quiz-question" id="q">{right}'
            f'{option.format("")}<div data-testid="quiz-explanation"></div></fieldset>')
    assert quiz_faults(good) == []
    two = good.replace(option.format(""), option.format(' data-correct="true"'))
    assert quiz_faults(two) == ["q: 2 right options"]
    assert quiz_faults(good + good) == ["q: the id appears twice"]


def test_every_lesson_has_questions_and_each_is_well_formed(built):
    for spec in build.editions():  # both editions
        if not render.is_lesson(spec):
            continue
        html = (built / spec["out"]).read_text(encoding="utf-8")
        assert QUESTION.search(html), f'{spec["out"]} has no quiz question'
        assert quiz_faults(html) == [], f'{spec["out"]}: {quiz_faults(html)}'
