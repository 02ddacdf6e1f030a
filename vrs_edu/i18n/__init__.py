"""The course's two editions, English and Korean (issue 40): which one is running (:mod:`vrs_edu.i18n.language`)
and Korean particles after a substituted word (:mod:`vrs_edu.i18n.korean`).

A layer of its own at the bottom of the package (tests/test_layering.py): it imports nothing else of ``vrs_edu``, so
every layer that writes text a learner reads (``lab``, ``viz``, ``chapters``, ``course``) may import it.
"""
