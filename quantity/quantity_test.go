package quantity

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		kind  Kind
		human bool
		in    string
		want  string // the value; "" when an error is wanted
		err   error
	}{
		{"Plain", Money, false, "12.5", "12.5", nil},
		{"Negative", Money, false, "-0.0000016", "-0.0000016", nil},
		{"LeadingPlus", Money, false, "+3", "3", nil},
		{"Exponent", Money, false, "5e-06", "0.000005", nil},
		{"UpperExponent", Money, false, "-1E+3", "-1000", nil},
		{"Spaces", Money, false, " 1.5\t", "1.5", nil},
		{"BareFraction", Money, false, ".5", "0.5", nil},
		{"TrailingPoint", Money, false, "5.", "5", nil},
		{"Zero", Money, false, "0.00000000000", "0", nil},
		{"ZeroHugeExponent", Money, false, "0e999999999", "0", nil},
		{"ManyDigits", Money, false, "123456789012345.678901234567890123", "123456789012345.678901234567890123", nil},
		{"NineteenDigits", Money, false, "0.0061215770588837586", "0.0061215770588837586", nil},
		{"LargestMoney", Money, false, "999999999999999.99", "999999999999999.99", nil},
		{"LargestNegativeMoney", Money, false, "-999999999999999.99", "-999999999999999.99", nil},
		{"MoneyBound", Money, false, "1e15", "", ErrOutOfRange},
		{"NegativeMoneyBound", Money, false, "-1000000000000000", "", ErrOutOfRange},
		{"HugeExponent", Money, false, "1e999999999", "", ErrOutOfRange},
		{"HugeNegativeExponent", Money, false, "-1e999999999", "", ErrOutOfRange},
		{"ExponentOverflowsInt", Money, false, "1e99999999999999999999999999999", "", ErrOutOfRange},
		{"TinyRoundsAway", Money, false, "1e-999999999", "0", nil},
		{"TinyRoundsAwayNegative", Money, false, "-1e-99", "0", nil},
		{"RoundedToScale", Money, false, "0.1234567890123456789012345678", "0.123456789012345678901235", nil},
		{"LongDigits", Money, false, strings.Repeat("9", 101), "", ErrNotNumber},
		{"LongZeros", Money, false, "0." + strings.Repeat("0", 99), "", ErrNotNumber},
		{"AtMaxLen", Money, false, "0." + strings.Repeat("0", 97) + "1", "0", nil},
		{"NaN", Money, false, "NaN", "", ErrNotNumber},
		{"Inf", Money, false, "Inf", "", ErrNotNumber},
		{"Infinity", Money, false, "-Infinity", "", ErrNotNumber},
		{"Hex", Money, false, "0x10", "", ErrNotNumber},
		{"HexFloat", Money, false, "0x1p-2", "", ErrNotNumber},
		{"Underscores", Money, false, "1_000", "", ErrNotNumber},
		{"UnderscoresHuman", Tokens, true, "1_000", "", ErrNotNumber},
		{"CommaStrict", Money, false, "1,000", "", ErrNotNumber},
		{"DecimalComma", Money, true, "12,5", "", ErrNotNumber},
		{"Empty", Money, false, "", "", ErrNotNumber},
		{"Blank", Money, false, "   ", "", ErrNotNumber},
		{"Sign", Money, false, "-", "", ErrNotNumber},
		{"Point", Money, false, ".", "", ErrNotNumber},
		{"TwoPoints", Money, false, "1.2.3", "", ErrNotNumber},
		{"TwoSigns", Money, false, "--1", "", ErrNotNumber},
		{"NoExponentDigits", Money, false, "1e", "", ErrNotNumber},
		{"InnerSpace", Money, false, "1 000", "", ErrNotNumber},
		{"DollarStrict", Money, false, "$3", "", ErrNotNumber},
		{"DollarHuman", Price, true, "$1,250.50", "1250.5", nil},
		{"Grouping", Price, true, "1,500.50", "1500.5", nil},
		{"GroupingMillions", Tokens, true, "1,000,000", "1000000", nil},
		{"BadGroup", Tokens, true, "1,00", "", ErrNotNumber},
		{"LongFirstGroup", Tokens, true, "1000,000", "", ErrNotNumber},
		{"LeadingComma", Tokens, true, ",100", "", ErrNotNumber},
		{"PriceNegative", Price, false, "-5", "", ErrOutOfRange},
		{"PriceNegativeZero", Price, false, "-0", "0", nil},
		{"Suffix", Tokens, true, "2.5M", "2500000", nil},
		{"SuffixBillion", Params, true, "8.03B", "8030000000", nil},
		{"SuffixTera", Tokens, true, "1T", "1000000000000", nil},
		{"SuffixLower", Tokens, true, "3k", "3000", nil},
		{"SuffixStrict", Tokens, false, "3k", "", ErrNotNumber},
		{"SuffixNotForMoney", Price, true, "3k", "", ErrNotNumber},
		{"TokensMax", Tokens, false, "1e18", "1000000000000000000", nil},
		{"TokensAboveMax", Tokens, false, "1000000000000000001", "", ErrOutOfRange},
		{"Tokens1e308", Tokens, true, "1e308", "", ErrOutOfRange},
		{"TokensFraction", Tokens, false, "2.5", "", ErrNotWhole},
		{"TokensWholeWithPoint", Tokens, false, "3.0", "3", nil},
		{"TokensTinyFraction", Tokens, false, "1e-999999", "", ErrNotWhole},
		{"TokensNegative", Tokens, false, "-1", "", ErrOutOfRange},
		{"CountMax", Count, true, "1B", "1000000000", nil},
		{"CountAboveMax", Count, true, "1.1B", "", ErrOutOfRange},
		{"GPUsShared", GPUs, false, "0.167", "0.167", nil},
		{"GPUsTooMany", GPUs, false, "1e6", "", ErrOutOfRange},
		{"Percent", Fraction, true, "70%", "0.7", nil},
		{"PercentSpace", Fraction, true, "70 %", "0.7", nil},
		{"PercentStrict", Fraction, false, "70%", "", ErrNotNumber},
		{"FractionOne", Fraction, false, "1", "1", nil},
		{"FractionAboveOne", Fraction, true, "101%", "", ErrOutOfRange},
		{"HoursMax", Hours, false, "1e6", "1000000", nil},
		{"HoursTooMany", Hours, false, "1e7", "", ErrOutOfRange},
		{"FactorTooLarge", Factor, false, "1e308", "", ErrOutOfRange},
		{"QuantityByteSeconds", Quantity, false, "2.6e21", "2600000000000000000000", nil},
		{"QuantityTooLarge", Quantity, false, "1e24", "", ErrOutOfRange},
		{"RateSuffix", Rate, true, "1.5k", "1500", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parse := tt.kind.Parse
			if tt.human {
				parse = tt.kind.ParseHuman
			}
			got, err := parse("field", tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Parse(%q) = %s, %v; want %v", tt.in, got, err, tt.err)
				}
				var qe *Error
				if !errors.As(err, &qe) || qe.Field != "field" || !strings.HasPrefix(err.Error(), "field: ") {
					t.Fatalf("error %q does not name the field", err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("Parse(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestErrorNamesFieldAndBound(t *testing.T) {
	t.Parallel()
	_, err := Price.Parse("amount", "1e999999999")
	want := `amount: "1e999999999" is out of range: money must be below 1,000,000,000,000,000`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	_, err = Tokens.ParseHuman("tokens", "1e308")
	want = `tokens: "1e308" is out of range: token counts must be at most 1,000,000,000,000,000,000`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	_, err = Money.Parse("cost", "-1e20")
	want = `cost: "-1e20" is out of range: money must be above -1,000,000,000,000,000`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	_, err = Price.Parse("amount", strings.Repeat("1", 1<<20))
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("a megabyte of digits: error %.300q is missing or not shortened", err)
	}
}

// TestHostileInputIsCheap parses the inputs that cost minutes and gigabytes
// when handed to the decimal library directly.
func TestHostileInputIsCheap(t *testing.T) {
	t.Parallel()
	start := time.Now()
	for _, s := range []string{"1e999999999", "1e-999999999", "-1e2147483647", "9e10000000", strings.Repeat("9", 10<<20),
		"0." + strings.Repeat("0", 1<<20) + "1", "1" + strings.Repeat("0", 99), "1" + strings.Repeat("0", 99) + "e-99"} {
		for _, k := range []Kind{Money, Price, Quantity, Tokens, Params, Count, GPUs, Hours, Rate, Fraction, Factor} {
			_, _ = k.Parse("f", s)
			_, _ = k.ParseHuman("f", s)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("hostile numbers took %s to refuse", d)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	var body struct {
		Number Text  `json:"number"`
		String Text  `json:"string"`
		Null   Text  `json:"null"`
		Empty  Text  `json:"empty"`
		Bool   Text  `json:"bool"`
		Long   Text  `json:"long"`
		Absent *Text `json:"absent"`
	}
	in := `{"number": 1e999999999, "string": "12.5", "null": null, "empty": "", "bool": true, "long": ` + strings.Repeat("9", 1<<20) + `}`
	if err := json.Unmarshal([]byte(in), &body); err != nil {
		t.Fatal(err)
	}
	if body.Number != "1e999999999" || body.String != "12.5" || body.Null != "" || body.Absent != nil {
		t.Fatalf("decoded %+v", body)
	}
	if _, err := Price.Parse("number", string(body.Number)); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("number: %v", err)
	}
	for name, v := range map[string]Text{"empty": body.Empty, "bool": body.Bool, "long": body.Long} {
		if _, err := Price.Parse(name, string(v)); !errors.Is(err, ErrNotNumber) {
			t.Errorf("%s (%.20q): %v, want not a number", name, v, err)
		}
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "999": "999", "1000": "1,000", "1234567.5": "1,234,567.5",
		"-1234.50": "-1,234.50", "-12": "-12", "100000": "100,000",
	} {
		if got := Group(in); got != want {
			t.Errorf("Group(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFormatted(t *testing.T) {
	for _, tc := range []struct {
		in    string
		comma bool
		want  string
	}{
		{"$10,100.00", false, "10100"},
		{"10100", false, "10100"},
		{"-0.0042", false, "-0.0042"},
		{"2.5e-06", false, "0.0000025"},
		{"1.234,56 €", true, "1234.56"},
		{"€1.234,56", true, "1234.56"},
		{"1 234,56", true, "1234.56"},
		{"1\u202f234,56 €", true, "1234.56"},
		{"(1,234.00)", false, "-1234"},
		{"($12.50)", false, "-12.5"},
		{"(12,50) €", true, "-12.5"},
		{"-$12.50", false, "-12.5"},
		{"$-12.50", false, "-12.5"},
		{"-12,50 €", true, "-12.5"},
		{"EUR 1.234,56", true, "1234.56"},
		{"1,234.56 USD", false, "1234.56"},
		{"CHF 1'234.50", false, "1234.5"},
		{"0,5", true, "0.5"},
	} {
		got, err := Money.ParseFormatted("cost", tc.in, tc.comma)
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseFormatted(%q, comma=%v) = %s, %v; want %s", tc.in, tc.comma, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in    string
		comma bool
		want  string
	}{
		{"1,234.56", true, `cost: "1,234.56" is not a number`}, // a dot after thousands in comma style
		{"12,5", false, `cost: "12,5" is not a number`},        // a comma decimal in dot style
		{"1,23,456.00", false, `cost: "1,23,456.00" is not a number`},
		{"(-5)", false, `cost: "(-5)" is not a number`},
		{"$", false, `cost: "$" is not a number`},
		{"12 apples", false, `cost: "12 apples" is not a number`},
		{"$1e999999", false, `cost: "$1e999999" is out of range: money must be below 1,000,000,000,000,000`},
		{"€" + strings.Repeat("1", 200), true, "is longer than 100 characters"},
	} {
		_, err := Money.ParseFormatted("cost", tc.in, tc.comma)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFormatted(%q, comma=%v) = %v; want %q", tc.in, tc.comma, err, tc.want)
		}
	}
}
