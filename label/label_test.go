package label

import "testing"

func TestClean(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Ann Lee":                               "Ann Lee",
		"  Acme ML  ":                           "Acme ML",
		"Ann\r\nReply-To: evil@example.com":     "Ann Reply-To: evil@example.com",
		"Ann\nClick: https://evil.example":      "Ann Click: https://evil.example",
		"a\tb\vc\fd\u0085e\u2028f\u2029g":       "a b c d e f g",
		"bell\a and esc\x1b[31m":                "bell and esc[31m",
		"invoice\u202efdp.exe":                  "invoicefdp.exe",
		"\u2066isolated\u2069 \u200emark\u200f": "isolated mark",
		"C1\u0090\u009fend":                     "C1end",
		"Zoë, 東京, Ωmega":                        "Zoë, 東京, Ωmega",
		"caf\xe9":                               "caf\xe9", // not UTF-8: left for the checks that refuse it
		"nul\x00":                               "nul\x00",
		"\r\n\t":                                "",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMixedScriptDomain(t *testing.T) {
	t.Parallel()
	for email, mixed := range map[string]bool{
		"ann@example.com":       false,
		"ann@pаypal.com":        true, // Cyrillic а
		"ann@gοogle.com":        true, // Greek ο
		"ann@яндекс.рф":         false,
		"ann@例え.jp":             false, // Han with Hiragana
		"ann@bücher.de":         false,
		"ann@xn--pypal-4ve.com": false, // punycode shows as what it is
		"ann@exаmple.co.uk":     true,
		"ann@123-shop.com":      false,
		"not an address":        false,
	} {
		if got := MixedScriptDomain(email); got != mixed {
			t.Errorf("MixedScriptDomain(%q) = %v, want %v", email, got, mixed)
		}
	}
}
