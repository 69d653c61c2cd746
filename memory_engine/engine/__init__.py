"""The paper's ideas, one file each: short_term, mid_term, long_term (with profile_attributes), heat,
the updating module (updater, with its prompts and summaries), the retrieval module (retriever) and the
generation module (generator); export and heat_timeline read what they built."""
