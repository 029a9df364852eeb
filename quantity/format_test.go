package quantity_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

func TestAmountAndMoney(t *testing.T) {
	for in, want := range map[string]string{
		"1339.4316": "1,339.43", "174601.544": "174,601.54", "49091.67": "49,091.67", "0": "0.00",
		"20.52022672899": "20.52", "-1234567.5": "-1,234,567.50", "0.0025": "0.0025", "0.25": "0.25",
		"0.000002": "0.000002", "0.0000001": "0.00", "0.123456": "0.12", "0.0105": "0.011", "-0.001": "-0.001",
		"999.999": "1,000.00", "-0.004": "-0.004", "1": "1.00",
	} {
		if got := quantity.FormatAmount(decimal.RequireFromString(in)); got != want {
			t.Errorf("FormatAmount(%s) = %q, want %q", in, got, want)
		}
	}
	if got := quantity.FormatMoney(decimal.RequireFromString("49091.67"), "USD"); got != "49,091.67 USD" {
		t.Errorf("FormatMoney = %q", got)
	}
	if got := quantity.FormatSignedMoney(decimal.RequireFromString("12"), "EUR"); got != "+12.00 EUR" {
		t.Errorf("FormatSignedMoney = %q", got)
	}
}

func TestCounts(t *testing.T) {
	if got := quantity.FormatCount(134080); got != "134,080" {
		t.Errorf("FormatCount = %q", got)
	}
	for n, want := range map[int64]string{1_200_000_000: "1.2B", 340_000_000: "340M", 12_500: "12.5k", 999: "999",
		2_000_000_000_000: "2T", -1500: "-1.5k", 1_049_999: "1M"} {
		if got := quantity.FormatCompact(n); got != want {
			t.Errorf("FormatCompact(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{134080: "134 KB", 999: "999 bytes", 4_200_000: "4.2 MB", 3_100_000_000: "3.1 GB"} {
		if got := quantity.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormatExact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"12.3400000000000009": "12.34", "12.340000000000001": "12.34", "0.0000004": "0.0000004",
		"1234.52022672899": "1234.520226729", "0.00000000005": "0.0000000001", "-0.00000000004": "0",
		"100": "100", "-3.50": "-3.5", "0": "0",
	} {
		if got := quantity.FormatExact(decimal.RequireFromString(in)); got != want {
			t.Errorf("FormatExact(%s) = %s, want %s", in, got, want)
		}
	}
}
