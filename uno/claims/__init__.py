"""The claim ledger: every headline claim of the papers, each with the runs and the measure
that check it and the rule that says whether our value agrees (:mod:`uno.claims.ledger`), one
module per paper (:mod:`uno.claims.uno_sc25`, :mod:`uno.claims.gemini_ton`,
:mod:`uno.claims.gear_ton`, :mod:`uno.claims.reps_arxiv`; the Uno artifact's runs: :mod:`uno.claims.uno_artifact`), run by
``uno-claims`` (:mod:`uno.claims.cli`), whose reduced form generates ``docs/claims.md``."""
