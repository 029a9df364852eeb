// Package ingest turns cloud billing exports and LLM usage logs (CSV,
// optionally gzip-compressed, with or without a UTF-8 BOM) into normalised
// charge rows shaped after FinOps FOCUS (docs/data-model.md, docs/import-formats.md).
//
// It is a pure streaming parser: it never touches the database. Open sniffs
// gzip and the BOM, reads the header, detects the source (or takes the one
// forced in Options) and returns a Reader whose Next fills one Row at a time,
// reusing the CSV record buffer and the tags map, so memory stays flat
// whatever the file size. Columns are always found by header name
// (case-insensitively), and every record must have one field per header
// name: a record with more fails with its line, since reading it would put
// values under the wrong columns, and so does one with fewer, unless every
// column it lacks is one its parser does without (header.need marks those
// it needs; the others are read as empty and counted, ShortRecords). Two
// shapes are allowed on purpose: OpenAI usage exports write empty buckets as
// their time columns alone, and a legacy CUR header may end in tag or
// cost-category names that no row has cells for (the koku CUR sample's
// header has one name more than its rows). What a spreadsheet leaves in a
// file it saved is read as the file without it (sheet.go).
//
// Every cell must be text Postgres can store: UTF-8 without NUL bytes. Every
// date must fall between 2000-01-01 and a year after Options.Now.
//
// # Sources and how they are detected
//
//	aws-cur              lineItem/UnblendedCost           billed = UnblendedCost; effective per LineItemType (docs/import-formats.md)
//	aws-cur2             line_item_unblended_cost         CUR 2.0 / Athena; resource_tags map or resource_tags_* columns
//	gcp-billing          cost + usage_start_time + service.description   billed = cost + Σ credits.amount
//	azure-cost           CostInBillingCurrency | PreTaxCost | Cost + MeterCategory
//	focus                BilledCost + ChargePeriodStart   effective falls back to billed when missing or 0
//	openai-usage         num_model_requests | start_time + input_tokens + output_tokens   priced, PricedByUs
//	openai-costs         line_item + amount_value
//	anthropic-usage      uncached_input_tokens            priced, PricedByUs
//	anthropic-cost       amount + cost_type               amount is in cents
//	anthropic-console-cost   usage_date_utc + cost_usd    display names → API ids (pricing.ClaudeModelID)
//	anthropic-console-usage  usage_date_utc + usage_output_tokens   priced per kind of token, PricedByUs
//	litellm-spend        request_id + spend               DedupeKey = request_id
//	litellm-daily        date + spend + api_requests
//	openrouter-activity  generation_id + cost_total       DedupeKey = generation_id
//	gcp-bigquery         never detected: a GCP connection's rows; slices by usage day, credits as rows (cost_type credit)
//	generic              never detected: Options.Mapping
//
// # Errors
//
// Bad input fails loudly with a *ParseError naming the file, line, column and
// value, e.g.
//
//	test_cur.csv: line 1042, column lineItem/UnblendedCost: "12,5" is not a number
//
// Usage rows that carry no cost (OpenAI and Anthropic usage reports, the
// Claude Console's usage download) are
// priced through Options.Pricer and flagged PricedByUs. A model the price
// table does not know fails the import (ErrNoPrice, naming the line and the
// model) rather than silently counting zero: a dashboard that under-reports
// spend is worse than an upload that asks for a price override.
package ingest
