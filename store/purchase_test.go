package store_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// spotRuleSKUs are SKUs the spot rule must judge alike in Go and in SQL:
// real ones of each provider, every case, the words' edges, and the
// characters Unicode case folding relates to the words' letters ('ſ' folds
// to 's' in Go's (?i), not in Postgres's ~*; 'İ', 'ı', 'K' and full-width
// letters are neither).
var spotRuleSKUs = []string{
	"", "USE1-SpotUsage:p4d.24xlarge", "USE1-BoxUsage:p4d.24xlarge", "BoxUsage:g5.xlarge",
	"Spot Preemptible Nvidia Tesla A100 GPU running in Americas", "Nvidia Tesla A100 GPU running in Americas",
	"Preemptible N1 Predefined Instance Core", "NC24ads A100 v4 Spot", "NC24ads A100 v4 Low Priority",
	"SPOT", "spot", "sPoT", "PREEMPTIBLE", "PreEmptIble", "spo", "pot", "preemptibl", "s p o t",
	"ſpot", "ſPOT", "preemptİble", "preemptıble", "ＳＰＯＴ", "ｓｐｏｔ", "sp\u200bot", "spöt", "Spot—é", "é-spot",
	"ÉSPOT", "spotty", "despotism", "\u00a0spot\u00a0", "SPOT\u0301", "preeMPTIBLE🚀", "🚀spot",
}

// The spot rule has one home (store/purchase.go) and two forms, Go's and
// SQL's; every SKU gets the same answer from both, so imports (Go) and
// rebuilds and the rollup check (SQL) put a GPU row in the same purchase.
func TestSpotRuleAgreesWithPostgres(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	skus := append([]string{}, spotRuleSKUs...)
	// And random strings from the words' letters in both cases, with the
	// characters above among them.
	r := rand.New(rand.NewPCG(35, 5))
	alphabet := []rune("spotSPOTreimblREIMBLſİıＳ é-")
	for range 2000 {
		n := 1 + r.IntN(14)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		skus = append(skus, b.String())
	}
	rows, err := st.Pool().Query(context.Background(), `SELECT s, `+store.PurchaseSQL("s", "$2::numeric", "$2::numeric")+`
		FROM unnest($1::text[]) s`, skus, decimal.NewFromInt(1))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var sku, purchase string
		if err := rows.Scan(&sku, &purchase); err != nil {
			t.Fatal(err)
		}
		n++
		if goSpot, sqlSpot := store.IsSpotSKU(sku), purchase == store.PurchaseSpot; goSpot != sqlSpot {
			t.Errorf("SKU %q: spot in Go %v, in SQL %v (%s)", sku, goSpot, sqlSpot, purchase)
		}
	}
	if err := rows.Err(); err != nil || n != len(skus) {
		t.Fatalf("%d of %d SKUs judged: %v", n, len(skus), err)
	}
	// The corpus holds both answers, so agreement is not both saying no.
	if !store.IsSpotSKU("USE1-SpotUsage:p4d.24xlarge") || store.IsSpotSKU("BoxUsage:g5.xlarge") || store.IsSpotSKU("ſpot") {
		t.Error("the rule itself moved")
	}
}
