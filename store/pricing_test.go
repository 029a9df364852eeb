package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestPriceOverrides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	orgA, ownerA := storetest.Org(t, st, storetest.OrgOpts{Name: "A"})
	orgB, ownerB := storetest.Org(t, st, storetest.OrgOpts{Name: "B"})
	eight, nine := decimal.RequireFromString("8"), decimal.RequireFromString("9.50")

	t.Run("UpsertReplacesSameInstanceCaseInsensitively", func(t *testing.T) {
		if _, err := st.UpsertGPUPriceOverrides(ctx, orgA.ID, ownerA.ID, []store.GPUPriceOverrideInput{
			{Provider: "AWS", InstanceType: "p5.48xlarge", OnDemand: &eight},
			{Provider: "aws", InstanceType: "P5.48XLARGE", OnDemand: &nine, Note: "second"},
		}); err != nil {
			t.Fatal(err)
		}
		os, err := st.GPUPriceOverrides(ctx, orgA.ID)
		if err != nil || len(os) != 1 || os[0].Provider != "aws" || !os[0].OnDemand.Equal(nine) || os[0].Note != "second" || os[0].UpdatedEmail != ownerA.Email {
			t.Fatalf("overrides = %+v, %v", os, err)
		}
	})

	t.Run("NoPriceIsRefused", func(t *testing.T) {
		if _, err := st.UpsertGPUPriceOverrides(ctx, orgA.ID, ownerA.ID, []store.GPUPriceOverrideInput{
			{Provider: "aws", InstanceType: "g5.xlarge"},
		}); err == nil {
			t.Fatal("a row without prices was written")
		}
	})

	t.Run("LLMUpsertAndRenameConflict", func(t *testing.T) {
		a, err := st.UpsertLLMPriceOverride(ctx, orgA.ID, ownerA.ID, store.LLMPriceOverrideInput{Model: "gpt-4.1-mini", Input: eight, Output: nine})
		if err != nil {
			t.Fatal(err)
		}
		again, err := st.UpsertLLMPriceOverride(ctx, orgA.ID, ownerA.ID, store.LLMPriceOverrideInput{Model: "GPT-4.1-mini", Input: nine, Output: nine})
		if err != nil || again.ID != a.ID || !again.Input.Equal(nine) {
			t.Fatalf("upsert again = %+v, %v", again, err)
		}
		b, err := st.UpsertLLMPriceOverride(ctx, orgA.ID, ownerA.ID, store.LLMPriceOverrideInput{Model: "claude-haiku-4.5", Input: eight, Output: eight})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.UpdateLLMPriceOverride(ctx, orgA.ID, b.ID, ownerA.ID, store.LLMPriceOverrideInput{Model: "gpt-4.1-mini", Input: eight, Output: eight})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("rename onto an existing model: %v, want ErrConflict", err)
		}
	})

	t.Run("OtherOrgsRowsAreNotFound", func(t *testing.T) {
		os, _ := st.GPUPriceOverrides(ctx, orgA.ID)
		if _, err := st.GPUPriceOverride(ctx, orgB.ID, os[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GPUPriceOverride(B, A's id) = %v", err)
		}
		if err := st.DeleteGPUPriceOverride(ctx, orgB.ID, os[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DeleteGPUPriceOverride(B, A's id) = %v", err)
		}
		sc, err := st.CreateScenario(ctx, orgB.ID, ownerB.ID, store.ScenarioBreakEven, "b", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		err = st.Fenced(ctx, orgA.ID, 0, func(fenced *store.Store) error {
			if scs, err := fenced.Scenarios(ctx, orgB.ID, store.ScenarioBreakEven); err != nil || len(scs) != 0 {
				t.Errorf("fenced to A, B's scenarios = %d, %v", len(scs), err)
			}
			if os, err := fenced.GPUPriceOverrides(ctx, orgA.ID); err != nil || len(os) != 1 {
				t.Errorf("fenced to A, A's overrides = %d, %v", len(os), err)
			}
			if _, err := fenced.CreateScenario(ctx, orgB.ID, ownerA.ID, store.ScenarioBreakEven, "sneaky", []byte(`{}`)); err == nil {
				t.Error("fenced to A, wrote a scenario into B")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteScenario(ctx, orgA.ID, sc.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DeleteScenario(A, B's id) = %v", err)
		}
	})
}
