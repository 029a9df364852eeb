package store

import "strings"

// The purchase rule (how a GPU usage row was bought: PurchaseSpot,
// PurchaseCommitted, PurchaseOnDemand) has one home, here. Imports apply it
// in Go as they write gpu_resource_daily (gpuRollup.add); rebuilds, rollup
// deltas and the rollup check apply it in SQL (PurchaseSQL). Both are made
// from spotSKUWords, and TestSpotRuleAgreesWithPostgres runs SKUs through
// both: they cannot drift apart.

// spotSKUWords are the words that make a SKU spot capacity, matched
// anywhere in it in any ASCII case: what Postgres's sku ~* '(spot|…)'
// matches (its case-insensitive match folds an ASCII letter to its other
// ASCII case only, where Go's (?i) would also take 'ſ' for 's').
var spotSKUWords = []string{"spot", "preemptible"}

// isSpotSKU reports whether sku names spot or preemptible capacity.
func isSpotSKU(sku string) bool {
	for _, w := range spotSKUWords {
		if containsFoldASCII(sku, w) {
			return true
		}
	}
	return false
}

// containsFoldASCII reports whether s contains sub (lower case ASCII),
// ignoring ASCII case. The bytes of a multi-byte UTF-8 character are all
// 0x80 or above, so they never match an ASCII letter.
func containsFoldASCII(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// PurchaseSQL is the purchase rule as an SQL expression over the
// expressions sku, effective and billed (a charge's sku, effective_cost
// and billed_cost): 'spot', 'committed' or 'on-demand', as gpuRollup.add
// decides in Go.
func PurchaseSQL(sku, effective, billed string) string {
	return `CASE WHEN ` + sku + ` ~* '(` + strings.Join(spotSKUWords, "|") + `)' THEN '` + PurchaseSpot + `'
				WHEN ` + effective + ` <> ` + billed + ` THEN '` + PurchaseCommitted + `'
				ELSE '` + PurchaseOnDemand + `' END`
}
