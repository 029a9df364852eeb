package ingest

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// focusParser reads FinOps FOCUS 1.0–1.2 files as exported by AWS, Azure,
// GCP and the FinOps sample data: NULL strings, space-separated dates and
// mixed-case enum values are tolerated.
type focusParser struct {
	opts *Options
	billed, effective, list, currency, start, end, billStart, account, category,
	provider, service, serviceCategory, skuMeter, skuID, resourceID, region,
	subAccount, quantity, unit, tags, description, resourceName int

	// ociRef is OCI's line item reference number (oci-focus only): OCI's
	// reports hold new hours each, not a restated month, so rows meet
	// earlier imports by it.
	ociRef int
}

// newOCIFocus reads OCI's FOCUS reports: FOCUS with oci_ columns.
func newOCIFocus(h *header, o *Options) (parser, error) {
	pp, err := newFOCUS(h, o)
	if err != nil {
		return nil, err
	}
	p := pp.(*focusParser)
	p.ociRef = h.col("oci_ReferenceNumber")
	h.need(p.ociRef)
	return p, nil
}

func newFOCUS(h *header, o *Options) (parser, error) {
	p := &focusParser{opts: o, ociRef: -1}
	p.billed = h.col("BilledCost")
	p.effective = h.col("EffectiveCost")
	p.list = h.col("ListCost")
	p.currency = h.col("BillingCurrency")
	p.start = h.col("ChargePeriodStart")
	p.end = h.col("ChargePeriodEnd")
	p.billStart = h.col("BillingPeriodStart")
	p.account = h.col("BillingAccountId")
	p.category = h.col("ChargeCategory")
	// Provider, Region and UsageQuantity/UsageUnit are the names of FOCUS's
	// 1.0 preview, which OCI's reports still write.
	p.provider = h.col("ProviderName", "ServiceProviderName", "Provider")
	p.service = h.col("ServiceName")
	p.serviceCategory = h.col("ServiceCategory")
	p.skuMeter = h.col("SkuMeter")
	p.skuID = h.col("SkuId")
	p.resourceID = h.col("ResourceId")
	p.region = h.col("RegionId", "Region")
	p.subAccount = h.col("SubAccountId")
	p.quantity = h.col("ConsumedQuantity", "UsageQuantity")
	p.unit = h.col("ConsumedUnit", "UsageUnit")
	p.tags = h.col("Tags")
	p.description = h.col("ChargeDescription")
	p.resourceName = h.col("ResourceName")
	h.need(p.billed, p.start)
	return p, nil
}

var focusCategories = map[string]ChargeCategory{
	"usage": ChargeUsage, "purchase": ChargePurchase, "tax": ChargeTax, "credit": ChargeCredit, "adjustment": ChargeAdjustment,
}

// text returns cell i trimmed, with FOCUS's NULL read as empty.
func (p *focusParser) text(c *rowCtx, i int) string { return nullStr(c.text(i)) }

func (p *focusParser) dec(c *rowCtx, i int, k quantity.Kind) (decimal.Decimal, bool, error) {
	if p.text(c, i) == "" {
		return decimal.Zero, false, nil
	}
	d, err := c.number(i, k)
	return d, true, err
}

func (p *focusParser) parse(c *rowCtx, row *Row) error {
	if err := p.periods(c, row); err != nil {
		return err
	}
	if err := p.costs(c, row); err != nil {
		return err
	}
	var err error
	if row.ChargeCategory, err = p.chargeCategory(c); err != nil {
		return err
	}
	row.ProviderName = p.text(c, p.provider)
	if ociProviderName(row.ProviderName) {
		row.ProviderName = ociProvider
	}
	if p.ociRef >= 0 {
		if row.DedupeKey = p.text(c, p.ociRef); row.DedupeKey == "" {
			return c.errAt(p.ociRef, ErrEmptyValue, "every OCI line item has a reference number")
		}
	}
	row.ServiceName = p.text(c, p.service)
	row.ServiceCategory = p.text(c, p.serviceCategory)
	row.SKU = p.text(c, p.skuMeter)
	if row.SKU == "" {
		row.SKU = p.text(c, p.skuID)
	}
	row.ResourceID = p.text(c, p.resourceID)
	row.RegionID = p.text(c, p.region)
	row.SubAccountID = p.text(c, p.subAccount)
	row.BillingAccountID = p.text(c, p.account)
	if row.ConsumedQuantity, _, err = p.dec(c, p.quantity, quantity.Quantity); err != nil {
		return err
	}
	row.ConsumedUnit = p.text(c, p.unit)
	if err := p.tagsOf(c, row); err != nil {
		return err
	}
	if p.opts.GPUs != nil && row.ChargeCategory == ChargeUsage {
		p.gpu(c, row)
	}
	return nil
}

// periods sets the charge period (a missing end ends the day it starts)
// and the billing period (the month of the charge when the file has none).
func (p *focusParser) periods(c *rowCtx, row *Row) error {
	var err error
	if p.text(c, p.start) == "" {
		return c.errAt(p.start, ErrEmptyValue, "a date is required")
	}
	if row.ChargePeriodStart, err = c.time(p.start); err != nil {
		return err
	}
	if p.text(c, p.end) != "" {
		if row.ChargePeriodEnd, err = c.time(p.end); err != nil {
			return err
		}
	}
	row.ChargePeriodEnd = endOrDay(row.ChargePeriodStart, row.ChargePeriodEnd)
	if p.text(c, p.billStart) == "" {
		row.BillingPeriodStart = monthStart(row.ChargePeriodStart)
		return nil
	}
	row.BillingPeriodStart, err = c.time(p.billStart)
	return err
}

// costs sets the billed, effective and list costs and the currency (USD
// when the file names none).
func (p *focusParser) costs(c *rowCtx, row *Row) error {
	var err error
	if row.BilledCost, _, err = p.dec(c, p.billed, quantity.Money); err != nil {
		return err
	}
	if row.EffectiveCost, err = p.effectiveCost(c, row.BilledCost); err != nil {
		return err
	}
	list, ok, err := p.dec(c, p.list, quantity.Money)
	if err != nil {
		return err
	}
	if !ok {
		list = row.BilledCost
	}
	row.ListCost = list
	row.BillingCurrency = strings.ToUpper(p.text(c, p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = "USD"
	}
	return nil
}

// effectiveCost returns the row's effective cost, or billed when it has
// none, or zero against a non-zero bill (seen on 604 rows of the FinOps
// sample).
func (p *focusParser) effectiveCost(c *rowCtx, billed decimal.Decimal) (decimal.Decimal, error) {
	eff, ok, err := p.dec(c, p.effective, quantity.Money)
	if err != nil {
		return eff, err
	}
	if !ok || (eff.IsZero() && !billed.IsZero()) {
		return billed, nil
	}
	return eff, nil
}

// chargeCategory returns the row's ChargeCategory: usage when the column
// is empty, an error for a value FOCUS does not define.
func (p *focusParser) chargeCategory(c *rowCtx) (ChargeCategory, error) {
	cc := p.text(c, p.category)
	if cc == "" {
		return ChargeUsage, nil
	}
	cat, ok := focusCategories[strings.ToLower(cc)]
	if !ok {
		return "", c.errAt(p.category, ErrSyntax, "expected Usage, Purchase, Tax, Credit or Adjustment")
	}
	return cat, nil
}

// tagsOf records the Tags column's tags (valueless tags are true, in
// FOCUS) and, on OCI rows, the team from OCI's defined tags.
func (p *focusParser) tagsOf(c *rowCtx, row *Row) error {
	tags := p.text(c, p.tags)
	if tags == "" {
		return nil
	}
	err := parseTagMap(tags, func(k, v string) {
		k = strings.TrimSpace(k)
		if v == "" {
			v = "true"
		}
		c.tag(k, v)
		if row.ProviderName == ociProvider {
			ociTeam(row, c.team, k, v) // OCI's defined tags: "Namespace.team"
		}
	})
	if err != nil {
		return c.looseErr(p.tags, err, `expected a JSON object like {"team": "ml"}`)
	}
	return nil
}

// gpu sets a usage row's GPU fields, from where its provider names the
// machine: AWS rows in the usage type or the charge description ("$3.06
// per On Demand Linux p3.2xlarge Instance Hour"), Azure rows in the meter,
// OCI and Google rows in the SKU description.
func (p *focusParser) gpu(c *rowCtx, row *Row) {
	prov := strings.ToLower(row.ProviderName)
	var inst string
	switch {
	case strings.Contains(prov, "aws") || strings.Contains(prov, "amazon"):
		prov = "aws"
		if i, _ := awsInstanceFromUsageType(row.SKU); i != "" {
			inst = i
		} else {
			inst = awsInstanceInText(p.text(c, p.description))
		}
	case strings.Contains(prov, "microsoft") || strings.Contains(prov, "azure"):
		prov = "azure"
		inst = azureVMSize(row.SKU)
	case row.ProviderName == ociProvider:
		ociGPU(row, p.opts.GPUs, p.text(c, p.skuMeter), p.text(c, p.description), p.text(c, p.resourceName))
		return
	case strings.Contains(prov, "google"):
		if gpu, ok := gcpGPUFromSKU(p.text(c, p.description)); ok && isHourUnit(row.ConsumedUnit) {
			row.GPUType, row.GPUHours = gpu, row.ConsumedQuantity
			return
		}
	}
	setGPU(row, p.opts.GPUs, prov, inst, row.ConsumedQuantity, isHourUnit(row.ConsumedUnit))
}

func isHourUnit(u string) bool {
	u = strings.ToLower(u)
	return strings.HasPrefix(u, "hr") || strings.Contains(u, "hour")
}

// awsInstanceInText finds an EC2 instance type ("p4d.24xlarge") in free text.
func awsInstanceInText(s string) string {
	for w := range strings.FieldsSeq(s) {
		fam, size, ok := strings.Cut(w, ".")
		if ok && fam != "" && len(fam) <= 8 && (strings.HasSuffix(size, "large") || size == "metal") {
			return w
		}
	}
	return ""
}
