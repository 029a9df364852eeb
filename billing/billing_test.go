package billing

import (
	"errors"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/burnrate/burnrate/store"
)

func TestPlanOf(t *testing.T) {
	t.Parallel()
	if p := (Config{}).PlanOf(store.Org{Plan: "free"}); p != Unlimited {
		t.Fatalf("billing off: plan = %+v, want unlimited", p)
	}
	on := Config{SecretKey: "sk_test", WebhookSecret: "whsec"}
	if p := on.PlanOf(store.Org{Plan: "team"}); p != Team {
		t.Fatalf("team = %+v", p)
	}
	if p := on.PlanOf(store.Org{Plan: "gold"}); p != Free {
		t.Fatalf("unknown plan = %+v, want free", p)
	}
}

func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	cfg := Config{SecretKey: "sk_test", WebhookSecret: "whsec_test"}
	payload := []byte(`{"id":"evt_1","object":"event","type":"customer.subscription.updated","api_version":"2023-10-16","data":{"object":{}}}`)
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: cfg.WebhookSecret})
	ev, err := cfg.VerifyWebhook(signed.Payload, signed.Header)
	if err != nil || ev.ID != "evt_1" {
		t.Fatalf("good signature: %+v, %v", ev, err)
	}
	forged := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: "whsec_other"})
	if _, err := cfg.VerifyWebhook(forged.Payload, forged.Header); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("forged signature: err = %v", err)
	}
}

// TestVerifyWebhookBoundsDepth: a body nested deeper than any event is
// refused before stripe-go reads it, signed or not.
func TestVerifyWebhookBoundsDepth(t *testing.T) {
	t.Parallel()
	cfg := Config{SecretKey: "sk_test", WebhookSecret: "whsec_test"}
	payload := []byte(`{"id":"evt_1","object":"event","data":{"object":` + strings.Repeat("[", 40_000) + `}}`)
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: cfg.WebhookSecret})
	if _, err := cfg.VerifyWebhook(signed.Payload, signed.Header); !errors.Is(err, ErrBadEvent) || !strings.Contains(err.Error(), "JSON nested more than 64 levels deep") {
		t.Fatalf("deep event: %v", err)
	}
}
