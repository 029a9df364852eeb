// Package ingest turns cloud billing exports and LLM usage logs (CSV,
// optionally gzip-compressed, with or without a UTF-8 BOM) into normalised
// charge rows shaped after FinOps FOCUS (DESIGN §3, §4).
//
// It is a pure streaming parser: it never touches the database. Open sniffs
// gzip and the BOM, reads the header, detects the source (or takes the one
// forced in Options) and returns a Reader whose Next fills one Row at a time,
// reusing the CSV record buffer and the tags map, so memory stays flat
// whatever the file size.
//
// Bad input fails loudly with a *ParseError naming the file, line, column and
// value, e.g.
//
//	test_cur.csv: line 1042, column lineItem/UnblendedCost: "12,5" is not a number
//
// Usage rows that carry no cost (OpenAI and Anthropic usage reports) are
// priced through Options.Pricer and flagged PricedByUs; a model without a
// price fails the import (ErrNoPrice) rather than silently counting zero.
package ingest
