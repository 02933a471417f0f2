mod scrub_corpus;
