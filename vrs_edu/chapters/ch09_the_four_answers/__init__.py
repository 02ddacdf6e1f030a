"""Chapter 09, the four answers: the article's questions answered in its order from every chapter's results
(the one chapter package that reads the others)."""
