package billing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stripe/stripe-go/v76"

	"github.com/burnrate/burnrate/store"
)

// Invoice is one of an org's Stripe invoices, for the invoices page.
type Invoice struct {
	Number   string
	Created  time.Time
	Amount   decimal.Decimal // what was due, in the currency's units
	Currency string          // upper case
	Status   string          // draft, open, paid, uncollectible, void
	// URL is Stripe's page of the invoice, PDF its download ("" when
	// Stripe gives none, as for a draft).
	URL, PDF string
}

// MaxInvoices is how many of the latest invoices are listed; the Billing
// Portal has them all.
const MaxInvoices = 24

// zeroDecimal are the currencies Stripe counts in whole units.
var zeroDecimal = map[string]bool{"bif": true, "clp": true, "djf": true, "gnf": true, "jpy": true, "kmf": true, "krw": true,
	"mga": true, "pyg": true, "rwf": true, "ugx": true, "vnd": true, "vuv": true, "xaf": true, "xof": true, "xpf": true}

// Invoices lists org's latest invoices, newest first: none for an org that
// never had a Stripe customer (none is made for it here).
func (s *Service) Invoices(ctx context.Context, st *store.Store, org store.Org) ([]Invoice, error) {
	if !s.Enabled() {
		return nil, ErrOff
	}
	b, err := st.OrgBilling(ctx, org.ID)
	if err != nil || b.CustomerID == "" {
		return nil, err
	}
	params := &stripe.InvoiceListParams{Customer: stripe.String(b.CustomerID)}
	params.Limit = stripe.Int64(MaxInvoices)
	params.Context = ctx
	it := s.api.Invoices.List(params)
	var out []Invoice
	for len(out) < MaxInvoices && it.Next() {
		in := it.Invoice()
		cur := string(in.Currency)
		exp := int32(-2)
		if zeroDecimal[cur] {
			exp = 0
		}
		out = append(out, Invoice{
			Number: in.Number, Created: time.Unix(in.Created, 0), Amount: decimal.New(in.AmountDue, exp),
			Currency: strings.ToUpper(cur), Status: string(in.Status), URL: httpsOnly(in.HostedInvoiceURL), PDF: httpsOnly(in.InvoicePDF),
		})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("stripe: list invoices: %w", err)
	}
	return out, nil
}

// httpsOnly keeps a link from Stripe only when it is https: the page links
// to it.
func httpsOnly(u string) string {
	if strings.HasPrefix(u, "https://") {
		return u
	}
	return ""
}
