package billing

import (
	"errors"
	"testing"

	"github.com/stripe/stripe-go/v76/webhook"
)

func TestPlanFor(t *testing.T) {
	t.Parallel()
	if p, _ := (Config{}).PlanFor("free"); p != SelfHosted {
		t.Fatalf("billing off: plan = %+v, want self-hosted", p)
	}
	on := Config{SecretKey: "sk_test", WebhookSecret: "whsec"}
	if p, err := on.PlanFor("team"); err != nil || p.Seats != 20 {
		t.Fatalf("team = %+v, %v", p, err)
	}
	if _, err := on.PlanFor("gold"); err == nil {
		t.Fatal("unknown plan accepted")
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
