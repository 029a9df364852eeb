package quantity

import (
	"strings"
)

// Formatted is what the text of an amount written as a spreadsheet writes
// it ("$10,000.00 ", "1.234,56 €", "(12.50)") shows about itself, before it
// is read: the currency symbol or code beside the number, and which of
// "." and "," is its decimal separator when the text alone says so.
// InspectFormatted finds it; ParseFormatted reads the amount once the
// caller knows the separator.
type Formatted struct {
	// Symbol is the currency symbol or ISO code around the number as
	// written ("$", "€", "EUR"), or "" when there is none.
	Symbol string
	// Decimal is the decimal separator the text shows, '.' or ',', or 0
	// when it shows none: a separator appears once (or not at all), so
	// that the text is read the same either way (12.50, 1200), or cannot
	// be told apart (1,234; see Ambiguous).
	Decimal byte
	// Ambiguous is set for one separator, once, followed by exactly three
	// digits: "1,234" is 1234 where a point writes decimals and 1.234
	// where a comma does.
	Ambiguous bool
	// Sep is the one separator, when the text has a single one ('.' or
	// ','); 0 otherwise.
	Sep byte
}

// InspectFormatted takes s apart as ParseFormatted reads it and says what
// its text shows. The text need not be a valid amount: ParseFormatted
// decides that.
//
// A text with both separators shows the last one as its decimal separator
// (1,234.56; 1.234,56). A separator repeated separates thousands, so the
// other one is the decimal separator (1,234,567; 1.234.567). One separator
// once is shown by nothing but its digits: before exactly three it is
// Ambiguous; otherwise it could only be a decimal separator, which the
// caller may or may not accept (12.50 is how any file writes decimals;
// 12,50 is only in a file that writes a decimal comma elsewhere).
func InspectFormatted(s string) Formatted {
	t := strings.TrimSpace(s)
	var f Formatted
	f.Symbol, t = currencyAffix(t)
	if strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	t = strings.TrimLeft(t, "+- ")
	if f.Symbol == "" {
		f.Symbol, t = currencyAffix(t)
	}
	// The mantissa only: an exponent holds no separator.
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		t = t[:i]
	}
	points, commas := strings.Count(t, "."), strings.Count(t, ",")
	switch {
	case points > 0 && commas > 0:
		if strings.LastIndexByte(t, '.') > strings.LastIndexByte(t, ',') {
			f.Decimal = '.'
		} else {
			f.Decimal = ','
		}
	case points > 1:
		f.Decimal = ','
	case commas > 1:
		f.Decimal = '.'
	case points == 1 || commas == 1:
		f.Sep = '.'
		if commas == 1 {
			f.Sep = ','
		}
		after := t[strings.IndexByte(t, f.Sep)+1:]
		digits := 0
		for digits < len(after) && after[digits] >= '0' && after[digits] <= '9' {
			digits++
		}
		f.Ambiguous = digits == 3 && strings.IndexByte(t, f.Sep) > 0
	}
	return f
}

// SymbolMatches reports whether a currency symbol or code written beside
// an amount can stand for the ISO 4217 currency: "$" for the dollars
// (USD, CAD, AUD, …), "€" for EUR, "EUR" for EUR alone. An empty symbol
// matches any currency.
func SymbolMatches(symbol, currency string) bool {
	if symbol == "" {
		return true
	}
	currency = strings.ToUpper(strings.TrimSpace(currency))
	if strings.EqualFold(symbol, currency) {
		return true
	}
	for _, c := range symbolCurrencies[symbol] {
		if c == currency {
			return true
		}
	}
	return false
}

// symbolCurrencies are the currencies each symbol ParseFormatted drops may
// stand for.
var symbolCurrencies = map[string][]string{
	"US$": {"USD"},
	"R$":  {"BRL"},
	"$":   {"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD", "CLP", "COP", "ARS"},
	"€":   {"EUR"},
	"£":   {"GBP"},
	"¥":   {"JPY", "CNY"},
	"₹":   {"INR"},
	"₩":   {"KRW"},
	"₽":   {"RUB"},
	"₺":   {"TRY"},
	"zł":  {"PLN"},
	"kr":  {"SEK", "NOK", "DKK", "ISK"},
	"Fr.": {"CHF"},
	"CHF": {"CHF"},
}
