package ingest

import (
	"strings"
	"time"

	"github.com/burnrate/burnrate/store"
)

// azureParser reads Azure Cost Management cost details: legacy usage
// details (PreTaxCost, UsageDateTime), EA (old Cost/BillingCurrency and 2024
// CostInBillingCurrency/BillingCurrencyCode) and MCA camelCase, both Actual
// and Amortized. Column names are matched case-insensitively.
type azureParser struct {
	opts *Options
	cost, payg, currency, date, subscription, billingAccount, billingStart,
	servicePeriodStart, meterCategory, meterName, resourceID,
	location, chargeType, quantity, unit, tags, additionalInfo, productName, pricingModel int

	serviceType string // per-row scratch

	// What the rows so far say of the file's cost basis (see costBasis).
	amortizedSeen, actualSeen bool
}

func newAzure(h *header, o *Options) (parser, error) {
	p := &azureParser{opts: o}
	p.cost = h.col("CostInBillingCurrency", "PreTaxCost", "Cost")
	p.payg = h.col("paygCostInBillingCurrency")
	p.currency = h.col("BillingCurrencyCode", "BillingCurrency", "Currency")
	p.date = h.col("Date", "UsageDateTime")
	p.subscription = h.col("SubscriptionId", "SubscriptionGuid")
	p.billingAccount = h.col("BillingAccountId")
	p.billingStart = h.col("BillingPeriodStartDate")
	p.servicePeriodStart = h.col("servicePeriodStartDate")
	p.meterCategory = h.col("MeterCategory")
	p.meterName = h.col("MeterName")
	p.resourceID = h.col("ResourceId", "InstanceId", "InstanceName")
	p.location = h.col("ResourceLocation", "Location", "MeterRegion")
	p.chargeType = h.col("ChargeType")
	p.quantity = h.col("Quantity", "UsageQuantity")
	p.unit = h.col("UnitOfMeasure")
	p.tags = h.col("Tags")
	p.additionalInfo = h.col("AdditionalInfo")
	p.productName = h.col("ProductName", "Product")
	p.pricingModel = h.col("PricingModel")
	if p.cost < 0 {
		return nil, &ParseError{Err: ErrMissingColumn, Msg: "CostInBillingCurrency, PreTaxCost or Cost (needed by azure-cost)"}
	}
	if p.date < 0 {
		return nil, &ParseError{Err: ErrMissingColumn, Msg: "Date or UsageDateTime (needed by azure-cost)"}
	}
	h.need(p.cost, p.date)
	return p, nil
}

var azureChargeTypes = map[string]ChargeCategory{
	"usage": ChargeUsage, "purchase": ChargePurchase, "tax": ChargeTax, "refund": ChargeCredit,
	"roundingadjustment": ChargeAdjustment, "unusedreservation": ChargeUsage, "unusedsavingsplan": ChargeUsage,
	"credit": ChargeCredit,
}

var azureServiceCategories = map[string]string{
	"virtual machines": "Compute", "virtual machines licenses": "Compute", "container instances": "Compute",
	"azure app service": "Compute", "functions": "Compute", "storage": "Storage", "bandwidth": "Networking",
	"virtual network": "Networking", "load balancer": "Networking", "networking": "Networking",
	"sql database": "Databases", "azure cosmos db": "Databases", "azure database for postgresql": "Databases",
	"cognitive services": "AI and Machine Learning", "azure openai": "AI and Machine Learning",
	"machine learning": "AI and Machine Learning", "log analytics": "Management and Governance",
	"azure monitor": "Management and Governance",
}

func (p *azureParser) parse(c *rowCtx, row *Row) error {
	var err error
	row.ProviderName = "Microsoft Azure"
	if row.ChargePeriodStart, err = c.time(p.date); err != nil {
		return err
	}
	row.ChargePeriodEnd = endOrDay(row.ChargePeriodStart, row.ChargePeriodEnd)
	if err = p.costs(c, row); err != nil {
		return err
	}
	row.ChargeCategory = azureChargeCategory(c.text(p.chargeType))
	p.noteBasis(c.text(p.chargeType), c.text(p.pricingModel), row.BilledCost.IsZero())

	category := c.text(p.meterCategory)
	row.ServiceName, row.ServiceCategory = p.service(c, category)
	row.SKU = c.text(p.meterName)
	row.ResourceID = c.text(p.resourceID)
	row.RegionID = c.text(p.location)
	row.SubAccountID = c.text(p.subscription)
	row.BillingAccountID = c.text(p.billingAccount)
	if row.BillingAccountID == "" {
		row.BillingAccountID = row.SubAccountID
	}
	if row.BillingPeriodStart, err = p.billingPeriod(c, row.ChargePeriodStart); err != nil {
		return err
	}
	if row.ConsumedQuantity, err = c.dec(p.quantity); err != nil {
		return err
	}
	row.ConsumedUnit = c.text(p.unit)

	if err := parseTagMap(c.raw(p.tags), c.tag); err != nil {
		return c.looseErr(p.tags, err, `expected tags like "env": "prod", "team": "ml" or {"team":"ml"}`)
	}
	if p.opts.GPUs != nil && strings.EqualFold(category, "Virtual Machines") {
		isHours := row.ChargeCategory == ChargeUsage && strings.Contains(strings.ToLower(row.ConsumedUnit), "hour")
		setGPU(row, p.opts.GPUs, "azure", p.vmSize(c, row.SKU), row.ConsumedQuantity, isHours)
	}
	return nil
}

// costs sets the billed, effective and list (pay-as-you-go) costs and the
// currency (USD when the file names none). Actual and Amortized exports
// share columns; the cost column holds the basis of the file (costBasis),
// and stands for both views until the other export of the period is
// imported (docs/data-model.md, "Cost bases").
func (p *azureParser) costs(c *rowCtx, row *Row) error {
	var err error
	if row.BilledCost, err = c.money(p.cost); err != nil {
		return err
	}
	row.EffectiveCost = row.BilledCost
	if row.ListCost, err = c.moneyOr(p.payg, row.BilledCost); err != nil {
		return err
	}
	row.BillingCurrency = strings.ToUpper(c.text(p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = "USD"
	}
	return nil
}

// azureChargeCategory maps a ChargeType to its FOCUS ChargeCategory: a row
// without one is usage, and a type not in azureChargeTypes an adjustment.
func azureChargeCategory(chargeType string) ChargeCategory {
	if chargeType == "" {
		return ChargeUsage
	}
	if cat, ok := azureChargeTypes[strings.ToLower(chargeType)]; ok {
		return cat
	}
	return ChargeAdjustment
}

// service returns the service name (the meter category, else the product
// name) and its FOCUS ServiceCategory.
func (p *azureParser) service(c *rowCtx, meterCategory string) (name, category string) {
	name = meterCategory
	if name == "" {
		name = c.text(p.productName)
	}
	category = azureServiceCategories[strings.ToLower(meterCategory)]
	if category == "" {
		category = "Other"
	}
	return name, category
}

// billingPeriod returns the billing period's start: the file's, else the
// service period's, else the month of the charge.
func (p *azureParser) billingPeriod(c *rowCtx, chargeStart time.Time) (time.Time, error) {
	for _, col := range []int{p.billingStart, p.servicePeriodStart} {
		t, err := c.timeOpt(col)
		if err != nil || !t.IsZero() {
			return t, err
		}
	}
	return monthStart(chargeStart), nil
}

// vmSize returns a Virtual Machines row's VM size: AdditionalInfo's
// ServiceType, else what the meter name says.
func (p *azureParser) vmSize(c *rowCtx, meter string) string {
	p.serviceType = ""
	if info := c.text(p.additionalInfo); info != "" {
		_ = parseTagMap(info, func(k, v string) {
			if k == "ServiceType" {
				p.serviceType = v
			}
		})
	}
	if p.serviceType != "" {
		return p.serviceType
	}
	return azureVMSize(meter)
}

// noteBasis notes what a row says of its file's cost basis. Only an
// amortized export has UnusedReservation / UnusedSavingsPlan rows, and
// prices the usage a commitment covers; an actual-cost export has that
// usage at zero and the commitment's purchase as a Purchase row.
func (p *azureParser) noteBasis(chargeType, pricingModel string, zero bool) {
	ct, pm := strings.ToLower(chargeType), strings.ToLower(pricingModel)
	committed := pm == "reservation" || pm == "savingsplan" || pm == "savings plan"
	switch {
	case ct == "unusedreservation" || ct == "unusedsavingsplan":
		p.amortizedSeen = true
	case committed && (ct == "usage" || ct == ""):
		if zero {
			p.actualSeen = true
		} else {
			p.amortizedSeen = true
		}
	case committed && ct == "purchase" && !zero:
		p.actualSeen = true
	}
}

// costBasis is the file's: amortized when a row shows it, else actual
// (billed) when a row shows that; a file without commitments looks the same
// either way, and its name decides ("…Amortized…"), else it is actual cost,
// what Azure exports by default.
func (p *azureParser) costBasis() store.CostBasis {
	switch {
	case p.amortizedSeen:
		return store.CostAmortized
	case p.actualSeen:
		return store.CostBilled
	}
	name := strings.ToLower(p.opts.FileName)
	if strings.Contains(name, "amortized") || strings.Contains(name, "amortised") {
		return store.CostAmortized
	}
	return store.CostBilled
}
