package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestPriceOverrideDelete deletes a GPU and an LLM price from the Prices
// page: each goes, the flash names it, and another org's admin gets a 404
// for a row that is not theirs.
func TestPriceOverrideDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, stranger := storetest.Org(t, b.st, storetest.OrgOpts{})
	if _, err := b.st.UpsertGPUPriceOverrides(ctx(), org.ID, owner.ID, []store.GPUPriceOverrideInput{{
		Provider: "aws", InstanceType: "p5.48xlarge", OnDemand: ptr(decimal.RequireFromString("8")),
	}}); err != nil {
		t.Fatal(err)
	}
	gpus, err := b.st.GPUPriceOverrides(ctx(), org.ID)
	if err != nil || len(gpus) != 1 {
		t.Fatalf("GPU overrides = %v, %v", gpus, err)
	}
	llm, err := b.st.UpsertLLMPriceOverride(ctx(), org.ID, owner.ID, store.LLMPriceOverrideInput{
		Model: "gpt-4.1-mini", Input: decimal.RequireFromString("0.1"), Output: decimal.RequireFromString("0.4"),
	})
	if err != nil {
		t.Fatal(err)
	}
	gpuPath, llmPath := "/prices/gpu/"+itoa(gpus[0].ID)+"/delete", "/prices/llm/"+itoa(llm.ID)+"/delete"

	other := b.client(t)
	other.login(stranger.Email)
	other.get("/prices")
	wantStatus(t, other.post(gpuPath, nil), http.StatusNotFound)
	wantStatus(t, other.post(llmPath, nil), http.StatusNotFound)

	c := b.client(t)
	c.login(owner.Email)
	for _, tc := range []struct{ path, flash string }{
		{gpuPath, "Deleted your price for aws p5.48xlarge; the catalog's applies again."},
		{llmPath, "Deleted your price for gpt-4.1-mini."},
	} {
		c.get("/prices")
		wantStatus(t, c.post(tc.path, nil), http.StatusSeeOther)
		rec := c.get("/prices")
		wantStatus(t, rec, http.StatusOK)
		if got := strings.TrimSpace(doc(t, rec).Find(`[data-testid=flash]`).Text()); !strings.Contains(got, tc.flash) {
			t.Errorf("after %s the flash says %q, want %q", tc.path, got, tc.flash)
		}
		wantStatus(t, c.post(tc.path, nil), http.StatusNotFound)
	}
	if os, _ := b.st.GPUPriceOverrides(ctx(), org.ID); len(os) != 0 {
		t.Errorf("GPU overrides left: %d", len(os))
	}
	if os, _ := b.st.LLMPriceOverrides(ctx(), org.ID); len(os) != 0 {
		t.Errorf("LLM overrides left: %d", len(os))
	}
}
