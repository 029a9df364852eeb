// Package quantity is the one parser for every number Burnrate is sent: form
// fields, query parameters, JSON bodies, CSV cells and command-line flags.
//
// A number from outside is only text until it is known to be small. The
// decimal library will happily build 1e999999999 (and then spend minutes and
// gigabytes adding it up or printing it), and float parsing turns 1e400 into
// +Inf, which panics later in decimal.NewFromFloat. So the parser scans the
// text itself first: it refuses anything longer than MaxLen characters, works
// out the order of magnitude from the digits and the exponent as written, and
// refuses a value above its kind's bound before a decimal is ever built.
// Digits below the kind's Scale are rounded away, so a tiny exponent
// (1e-999999999) costs nothing either.
//
// Each Kind is a sort of field with its own sane range: Money and Price (bills
// and amounts), Quantity (usage amounts on bills), Tokens, Params, Count,
// GPUs, Hours, Rate, Fraction and Factor. The ranges are wide enough for any
// real bill or plan and small enough that arithmetic and rendering stay cheap;
// the domain's own rules (a budget is more than zero, utilisation is at most
// 1) are checked by the domain after parsing.
//
// The package imports only the standard library and decimal, so that pure
// packages such as pricing may use it as well as ingest, web and the commands.
package quantity

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// MaxLen is the longest number accepted, in bytes after surrounding spaces
// are trimmed. Real values (a bill's 0.000000012345678901234567 included)
// are far shorter.
const MaxLen = 100

// maxExp caps the exponent as written while it is read: any exponent this
// large puts the value out of every kind's range, or rounds it to zero.
const maxExp = 10_000

// Errors wrapped by *Error, for errors.Is.
var (
	ErrNotNumber  = errors.New("is not a number")
	ErrNotWhole   = errors.New("is not a whole number")
	ErrOutOfRange = errors.New("is out of range")
)

// Error is a number that could not be accepted for a field. Its message
// names the field, the value as sent (shortened) and, for a value out of
// range, the bound:
//
//	amount: "1e999999999" is out of range: money must be below 1,000,000,000,000,000
type Error struct {
	Field  string // the field, parameter, flag or column the value came in
	Value  string // the value as sent, shortened to a few dozen characters
	Err    error  // ErrNotNumber, ErrNotWhole or ErrOutOfRange
	Detail string // the bound broken, or what is wrong with the text; may be empty
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(strconv.Quote(e.Value))
	b.WriteByte(' ')
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns ErrNotNumber, ErrNotWhole or ErrOutOfRange.
func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus is 422: the number is the sender's to fix.
func (e *Error) HTTPStatus() int { return 422 }

// Kind is a sort of number with its range and how it may be written. The
// zero Kind is not useful; use the variables below.
type Kind struct {
	// Name is what the bound calls the values: "money", "token counts".
	Name string
	// Max bounds the magnitude; Inclusive says whether Max itself is allowed.
	Max       decimal.Decimal
	Inclusive bool
	// Signed allows negative values down to -Max; otherwise the least is 0.
	Signed bool
	// Whole refuses fractions (after suffixes are applied) instead of
	// rounding them.
	Whole bool
	// Scale is how many decimal places are kept; more are rounded away.
	Scale int32
	// Human spellings ParseHuman accepts on top of the plain ones: a leading
	// "$", a k/M/B/G/T suffix, a trailing "%" (meaning hundredths).
	Dollar, Suffixes, Percent bool

	maxDigits int // digits in Max's integer part: values with more are out of range
}

func kind(k Kind) Kind {
	k.maxDigits = len(k.Max.Truncate(0).Abs().String())
	return k
}

func pow10(n int32) decimal.Decimal { return decimal.New(1, n) }

// The kinds of number Burnrate takes from outside.
var (
	// Money is a signed amount of any currency, as bills hold it (credits
	// and refunds are negative): below 10^15 in size, to 24 decimal places
	// (bills price sub-cent units).
	Money = kind(Kind{Name: "money", Max: pow10(15), Signed: true, Scale: 24, Dollar: true})
	// Price is money that cannot be negative: budgets, prices, overheads.
	Price = kind(Kind{Name: "money", Max: pow10(15), Scale: 24, Dollar: true})
	// Quantity is a usage amount on a bill (hours, GB, requests, and byte-
	// seconds, which grow large): below 10^24 in size, signed.
	Quantity = kind(Kind{Name: "quantities", Max: pow10(24), Signed: true, Scale: 24})
	// Tokens is a whole count of tokens or requests, up to 10^18.
	Tokens = kind(Kind{Name: "token counts", Max: pow10(18), Inclusive: true, Whole: true, Suffixes: true})
	// Params is a model's whole parameter count, up to 10^15.
	Params = kind(Kind{Name: "parameter counts", Max: pow10(15), Inclusive: true, Whole: true, Suffixes: true})
	// Count is a small whole count: sequence length, concurrency, a GPU cap,
	// a threshold in percent; up to 10^9.
	Count = kind(Kind{Name: "counts", Max: pow10(9), Inclusive: true, Whole: true, Suffixes: true})
	// GPUs is a GPU count, fractional for shared GPUs (1/6 of an A10), up to
	// 100,000.
	GPUs = kind(Kind{Name: "GPU counts", Max: pow10(5), Inclusive: true, Scale: 12})
	// Hours is a duration in hours, up to 1,000,000 (114 years).
	Hours = kind(Kind{Name: "hours", Max: pow10(6), Inclusive: true, Scale: 12})
	// Rate is a throughput in tokens per second, up to 10^12.
	Rate = kind(Kind{Name: "rates", Max: pow10(12), Inclusive: true, Scale: 12, Suffixes: true})
	// Fraction is a share between 0 and 1 (utilisation); "70%" means 0.7.
	Fraction = kind(Kind{Name: "fractions", Max: decimal.NewFromInt(1), Inclusive: true, Scale: 12, Percent: true})
	// Factor is a model assumption or multiplier (peak factor, bytes per
	// parameter, interruptions per hour), up to 1,000,000.
	Factor = kind(Kind{Name: "factors", Max: pow10(6), Inclusive: true, Scale: 12})
)

// AmbiguousComma is the detail of the error for a number whose comma does
// not separate thousands (12,5 or 1.250,50): Burnrate reads a point as the
// decimal separator and a comma only between groups of three digits.
const AmbiguousComma = "a comma may only separate thousands (1,250.50); write decimals with a point (12.5)"

// Parse reads s as a plain number, the way files and JSON write them:
// optional sign, digits with an optional decimal point, optional exponent
// (12.5, -0.0000016, 5e-06, +3). Surrounding spaces are ignored. field names
// the value in errors. An empty s is an error; callers that allow a blank
// field check for it first.
func (k Kind) Parse(field, s string) (decimal.Decimal, error) {
	return k.parse(field, s, false)
}

// ParseHuman reads s as people type numbers into forms and flags: what Parse
// accepts, plus thousands separators (1,250.50), and, where the kind allows,
// a leading $ (money), a k/M/B/G/T suffix (counts: 2.5M, 3B) or a trailing
// % (fractions: 70%).
func (k Kind) ParseHuman(field, s string) (decimal.Decimal, error) {
	return k.parse(field, s, true)
}

// parse is Parse, or with human ParseHuman.
func (k Kind) parse(field, raw string, human bool) (decimal.Decimal, error) {
	s := strings.TrimSpace(raw)
	fail := func(err error, detail string) (decimal.Decimal, error) {
		return decimal.Zero, &Error{Field: field, Value: shorten(s), Err: err, Detail: detail}
	}
	if s == "" {
		return fail(ErrNotNumber, "it is empty")
	}
	if len(s) > MaxLen {
		return fail(ErrNotNumber, fmt.Sprintf("it is longer than %d characters", MaxLen))
	}
	t := s
	neg := false
	if t[0] == '+' || t[0] == '-' {
		neg = t[0] == '-'
		t = t[1:]
	}
	shift := 0 // power of ten from a suffix
	if human {
		t, shift = k.withoutHumanAffixes(t)
	}
	n, ok := scan(t, human)
	if !ok {
		if strings.Contains(t, ",") {
			// "12,5" is 12.5 in much of Europe and a typo for 125 or
			// 12,500 elsewhere: refuse it rather than guess.
			return fail(ErrNotNumber, AmbiguousComma)
		}
		return fail(ErrNotNumber, "")
	}
	n.exp += shift
	d, detail, err := k.fit(n, neg)
	if err != nil {
		return fail(err, detail)
	}
	return d, nil
}

// withoutHumanAffixes returns t without the leading $ and the trailing
// suffix or % that k allows people to type, and the power of ten the
// suffix stands for.
func (k Kind) withoutHumanAffixes(t string) (string, int) {
	if k.Dollar && strings.HasPrefix(t, "$") {
		t = t[1:]
	}
	if t == "" {
		return t, 0
	}
	shift := 0
	switch last := t[len(t)-1]; {
	case k.Percent && last == '%':
		shift = -2
	case k.Suffixes && (last == 'k' || last == 'K'):
		shift = 3
	case k.Suffixes && (last == 'm' || last == 'M'):
		shift = 6
	case k.Suffixes && (last == 'b' || last == 'B' || last == 'g' || last == 'G'):
		shift = 9
	case k.Suffixes && (last == 't' || last == 'T'):
		shift = 12
	}
	if shift != 0 {
		t = strings.TrimRight(t[:len(t)-1], " ")
	}
	return t, shift
}

// fit returns the scanned number n (negated when neg) as a value of k,
// rounded to k's scale, or the error and its detail when it is out of k's
// range or, for a whole kind, a fraction.
func (k Kind) fit(n number, neg bool) (d decimal.Decimal, detail string, err error) {
	if n.sig == 0 {
		return decimal.Zero, "", nil
	}
	// The most significant digit's power of ten: 123.4 has 2, 0.05 has -2.
	msd := n.sig - 1 + n.exp
	if msd >= k.maxDigits {
		return decimal.Zero, k.bound(neg), ErrOutOfRange
	}
	if msd < -int(k.Scale)-1 {
		// Every digit lies below the places kept: it rounds to zero, which
		// for a whole kind means it was a fraction.
		if k.Whole {
			return decimal.Zero, "", ErrNotWhole
		}
		return decimal.Zero, "", nil
	}
	// Both exponents are now small, so building the decimal is cheap.
	if n.sig <= 18 {
		d = decimal.New(n.v, int32(n.exp))
	} else {
		d = decimal.NewFromBigInt(n.coefficient(), int32(n.exp))
	}
	if neg {
		d = d.Neg()
	}
	if k.Whole && !d.IsInteger() {
		return decimal.Zero, "", ErrNotWhole
	}
	if n.exp < -int(k.Scale) {
		d = d.Round(k.Scale)
	}
	if d.Sign() < 0 && !k.Signed {
		return decimal.Zero, k.Name + " must not be negative", ErrOutOfRange
	}
	if msd == k.maxDigits-1 {
		if c := d.Abs().Cmp(k.Max); c > 0 || c == 0 && !k.Inclusive {
			return decimal.Zero, k.bound(neg), ErrOutOfRange
		}
	}
	return d, "", nil
}

// bound says what a value of k must be, for an error.
func (k Kind) bound(neg bool) string {
	max := Group(k.Max.String())
	switch {
	case neg && k.Signed && k.Inclusive:
		return k.Name + " must be at least -" + max
	case neg && k.Signed:
		return k.Name + " must be above -" + max
	case neg:
		return k.Name + " must not be negative"
	case k.Inclusive:
		return k.Name + " must be at most " + max
	}
	return k.Name + " must be below " + max
}

// number is a scanned number: the significant digits (sig of them, the
// first 18 in v) times ten to exp. Zero has sig 0.
type number struct {
	v    int64
	sig  int
	exp  int
	text string // the mantissa as written, for numbers of more than 18 digits
}

// coefficient is n's significant digits as an integer.
func (n number) coefficient() *big.Int {
	var b strings.Builder
	for i := 0; i < len(n.text); i++ {
		if ch := n.text[i]; ch >= '0' && ch <= '9' && (b.Len() > 0 || ch != '0') {
			b.WriteByte(ch)
		}
	}
	v, _ := new(big.Int).SetString(b.String(), 10)
	return v
}

// scan reads digits[.digits][e[+-]digits] (no sign: the caller took it),
// with thousands separators in the whole part when human. It needs at least
// one digit in the mantissa.
func scan(t string, human bool) (number, bool) {
	var n number
	i, whole, frac := 0, 0, 0
	digit := func(ch byte) {
		if n.sig > 0 || ch != '0' {
			n.sig++
			if n.sig <= 18 {
				n.v = n.v*10 + int64(ch-'0')
			}
		}
	}
	group := -1 // digits since the last separator; -1 before the first one
	for ; i < len(t); i++ {
		ch := t[i]
		if ch >= '0' && ch <= '9' {
			digit(ch)
			whole++
			if group >= 0 {
				group++
			}
			continue
		}
		if ch == ',' && human && (group == -1 && whole >= 1 && whole <= 3 || group == 3) {
			group = 0
			continue
		}
		break
	}
	if group >= 0 && group != 3 {
		return number{}, false
	}
	if i < len(t) && t[i] == '.' {
		for i++; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
			digit(t[i])
			frac++
		}
	}
	if whole+frac == 0 {
		return number{}, false
	}
	mantissa := t[:i]
	exp := 0
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		eneg := false
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			eneg = t[i] == '-'
			i++
		}
		start := i
		for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
			if exp < maxExp {
				exp = exp*10 + int(t[i]-'0')
			}
		}
		if i == start {
			return number{}, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(t) {
		return number{}, false
	}
	// v has only the first 18 digits: keep the text to read them all.
	n.exp = exp - frac
	if n.sig > 18 {
		n.text = mantissa
	}
	return n, true
}

// Group puts thousands separators into a plain decimal number, keeping its
// sign and fraction: -1234567.5 → -1,234,567.5. Every page, email and
// message that shows a number writes it so.
func Group(s string) string {
	sign := ""
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		sign, s = "-", rest
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, ch := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return sign + b.String()
}

// shorten keeps an error message readable whatever was sent.
func shorten(s string) string {
	const keep = 40
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// ParseFormatted reads s as spreadsheets and hand-made bills write amounts:
// what ParseHuman accepts, plus a currency symbol or ISO code before or
// after the number ("$10,100.00", "1.234,56 €", "EUR 12.50"), parentheses
// for a negative ("(1,234.00)"), and thousands separated by spaces or
// apostrophes. decimalComma says the file writes its decimals after a comma
// (1.234,56): the two styles cannot be told apart from "1,234" alone, so
// the caller declares it. Thousands must come in groups of three. Errors
// quote s as sent.
func (k Kind) ParseFormatted(field, s string, decimalComma bool) (decimal.Decimal, error) {
	t := strings.TrimSpace(s)
	sent := shorten(t)
	fail := func() (decimal.Decimal, error) {
		return decimal.Zero, &Error{Field: field, Value: sent, Err: ErrNotNumber}
	}
	if len(t) > MaxLen {
		return decimal.Zero, &Error{Field: field, Value: sent, Err: ErrNotNumber,
			Detail: fmt.Sprintf("it is longer than %d characters", MaxLen)}
	}
	neg := false
	t = trimCurrency(t) // "(12,50) €"
	if strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
		neg, t = true, strings.TrimSpace(t[1:len(t)-1])
	}
	sign := ""
	takeSign := func() {
		if sign == "" && t != "" && (t[0] == '-' || t[0] == '+') {
			sign, t = t[:1], strings.TrimSpace(t[1:])
		}
	}
	takeSign()
	t = trimCurrency(t)
	takeSign()
	if t == "" || neg && sign != "" {
		return fail()
	}
	// Write the number as ParseHuman reads it: "." for the decimals and
	// "," between thousands.
	var b strings.Builder
	for _, r := range t {
		switch {
		case r >= '0' && r <= '9', r == 'e', r == 'E', r == '-', r == '+':
			b.WriteRune(r)
		case r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\'' || r == '’':
			b.WriteByte(',')
		case r == '.' && decimalComma, r == ',' && !decimalComma:
			b.WriteByte(',')
		case r == ',' && decimalComma, r == '.' && !decimalComma:
			b.WriteByte('.')
		default:
			return fail()
		}
	}
	if neg {
		sign = "-"
	}
	d, err := k.parse(field, sign+b.String(), true)
	var qe *Error
	if errors.As(err, &qe) {
		qe.Value = sent
	}
	return d, err
}

// currencySymbols are the symbols ParseFormatted drops around an amount,
// longer ones first ("US$" and "R$" before "$").
var currencySymbols = []string{"US$", "R$", "$", "€", "£", "¥", "₹", "₩", "₽", "₺", "zł", "kr", "Fr.", "CHF"}

// trimCurrency drops one currency symbol or three-letter code before or
// after t, and the spaces beside it.
func trimCurrency(t string) string {
	_, rest := currencyAffix(t)
	return rest
}

// currencyAffix returns the currency symbol or three-letter code before or
// after t ("" when there is none) and t without it and the spaces beside it.
func currencyAffix(t string) (symbol, rest string) {
	for _, sym := range currencySymbols {
		if rest, ok := strings.CutPrefix(t, sym); ok {
			return sym, strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutSuffix(t, sym); ok {
			return sym, strings.TrimSpace(rest)
		}
	}
	isCode := func(c string) bool {
		for i := 0; i < len(c); i++ {
			if c[i] < 'A' || c[i] > 'Z' {
				return false
			}
		}
		return len(c) == 3
	}
	if len(t) > 4 && t[3] == ' ' && isCode(t[:3]) {
		return t[:3], strings.TrimSpace(t[4:])
	}
	if n := len(t); n > 4 && t[n-4] == ' ' && isCode(t[n-3:]) {
		return t[n-3:], strings.TrimSpace(t[:n-4])
	}
	return "", t
}
