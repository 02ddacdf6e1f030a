"""The course's two editions, English and Korean (issue 40): which one is running (:mod:`vrs_edu.i18n.language`),
Korean particles after a substituted word (:mod:`vrs_edu.i18n.korean`), the verdict words
(:mod:`vrs_edu.i18n.verdicts`), the frames of the evidence appendices' statistics (:mod:`vrs_edu.i18n.evidence`)
and the recipes' declared claims and premises in Korean (:mod:`vrs_edu.i18n.declared`).

A layer of its own at the bottom of the package (tests/test_layering.py): it imports nothing else of ``vrs_edu``, so
every layer that writes text a learner reads (``lab``, ``viz``, ``chapters``, ``course``) may import it.
"""
