package ingest

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// gcpParser reads the GCP Cloud Billing BigQuery export flattened to CSV
// (dotted column names; credits and labels as JSON or Python reprs).
type gcpParser struct {
	opts *Options
	account, service, sku, start, end, project, labels, projectLabels, gcpTags,
	systemLabels, region, location, cost, costAtList, currency, usageAmount,
	usageUnit, pricingAmount, pricingUnit, credits, invoiceMonth, costType,
	resourceName int
	// Flattened exports: credits pre-summed into one amount, and one label
	// per row as a key and a value column.
	creditsAmount, labelKey, labelValue int

	// daySlices: the rows a gcp-bigquery connection pulls meet earlier
	// pulls by their usage day (each pull restates a few days), not by
	// invoice month.
	daySlices bool

	// per-row scratch
	machineSpec string
}

// newGCPBigQuery reads the gcp-bigquery source: the rows a connection
// pulls from a billing export table, flattened as gcp-billing reads them,
// each a slice of its own by usage day (docs/import-formats.md).
func newGCPBigQuery(h *header, o *Options) (parser, error) {
	pp, err := newGCP(h, o)
	if err != nil {
		return nil, err
	}
	p := pp.(*gcpParser)
	p.daySlices = true
	return p, nil
}

func newGCP(h *header, o *Options) (parser, error) {
	p := &gcpParser{opts: o}
	// Every nested field may come dotted (the console's CSV, bq extract) or
	// with underscores (a SELECT that flattens the record, a Looker Studio
	// download): see docs/import-formats.md, gcp-billing.
	col := func(names ...string) int {
		for _, n := range names {
			if i := h.col(n, strings.ReplaceAll(n, ".", "_")); i >= 0 {
				return i
			}
		}
		return -1
	}
	p.account = col("billing_account_id")
	p.service = col("service.description")
	p.sku = col("sku.description")
	p.start = col("usage_start_time")
	p.end = col("usage_end_time")
	p.project = col("project.id")
	p.labels = col("labels")
	p.projectLabels = col("project.labels")
	p.gcpTags = col("tags")
	p.systemLabels = col("system_labels")
	p.region = col("location.region")
	p.location = col("location.location")
	p.cost = col("cost")
	p.costAtList = col("cost_at_list")
	p.currency = col("currency")
	p.usageAmount = col("usage.amount")
	p.usageUnit = col("usage.unit")
	p.pricingAmount = col("usage.amount_in_pricing_units")
	p.pricingUnit = col("usage.pricing_unit")
	p.credits = col("credits")
	p.creditsAmount = col("credits.amount", "credits_total", "total_credits")
	p.invoiceMonth = col("invoice.month")
	p.costType = col("cost_type")
	p.resourceName = col("resource.global_name", "resource.name")
	p.labelKey, p.labelValue = col("labels.key"), col("labels.value")
	if p.credits >= 0 {
		p.creditsAmount = -1 // the list is the credits; a sum beside it would count them twice
	}
	for _, need := range []struct {
		idx  int
		name string
	}{{p.cost, "cost"}, {p.start, "usage_start_time"}} {
		if need.idx < 0 {
			return nil, &ParseError{Err: ErrMissingColumn, Msg: need.name + " (needed by gcp-billing)"}
		}
		h.need(need.idx)
	}
	return p, nil
}

var gcpCostTypes = map[string]ChargeCategory{
	"regular": ChargeUsage, "tax": ChargeTax, "adjustment": ChargeAdjustment, "rounding_error": ChargeAdjustment,
	// Not a cost_type of Google's: a credit written as a row of its own,
	// as the gcp-bigquery connection writes them.
	"credit": ChargeCredit,
}

func (p *gcpParser) parse(c *rowCtx, row *Row) error {
	var err error
	row.ProviderName = "Google Cloud"
	if row.ChargePeriodStart, err = c.time(p.start); err != nil {
		return err
	}
	if row.ChargePeriodEnd, err = c.timeOpt(p.end); err != nil {
		return err
	}
	row.ChargePeriodEnd = endOrDay(row.ChargePeriodStart, row.ChargePeriodEnd)

	if err = p.costs(c, row); err != nil {
		return err
	}
	row.BillingCurrency = strings.ToUpper(c.text(p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = "USD"
	}
	row.ChargeCategory = gcpChargeCategory(c.text(p.costType))

	row.ServiceName = c.text(p.service)
	row.ServiceCategory = gcpServiceCategory(row.ServiceName)
	row.SKU = c.text(p.sku)
	row.ResourceID = c.text(p.resourceName)
	row.RegionID = c.text(p.region)
	if row.RegionID == "" {
		row.RegionID = c.text(p.location)
	}
	row.SubAccountID = c.text(p.project)
	row.BillingAccountID = c.text(p.account)
	if p.daySlices {
		row.BillingPeriodStart = row.ChargePeriodStart.Truncate(24 * time.Hour)
	} else if row.BillingPeriodStart, err = p.billingPeriodStart(c, row.ChargePeriodStart); err != nil {
		return err
	}
	if row.ConsumedQuantity, err = c.dec(p.usageAmount); err != nil {
		return err
	}
	row.ConsumedUnit = c.text(p.usageUnit)

	if err = p.tags(c); err != nil {
		return err
	}
	p.gpu(c, row)
	return nil
}

// costs sets the billed, effective and list costs. Credits live inside the
// row: billed = cost + sum(credits.amount), and the list cost is before
// credits.
func (p *gcpParser) costs(c *rowCtx, row *Row) error {
	cost, err := c.money(p.cost)
	if err != nil {
		return err
	}
	credits, err := p.creditTotal(c)
	if err != nil {
		return err
	}
	summed, err := c.money(p.creditsAmount)
	if err != nil {
		return err
	}
	credits = credits.Add(summed)
	row.BilledCost = cost.Add(credits)
	row.EffectiveCost = row.BilledCost
	row.ListCost, err = c.moneyOr(p.costAtList, cost)
	return err
}

// creditTotal returns the sum of the amounts in the credits cell, a list
// written as JSON or as a Python repr; an empty cell or list is zero.
func (p *gcpParser) creditTotal(c *rowCtx) (decimal.Decimal, error) {
	credits := decimal.Zero
	s := c.text(p.credits)
	if s == "" || s == "[]" {
		return credits, nil
	}
	v, perr := parseLoose(s)
	list, ok := v.([]any)
	if perr != nil || (!ok && v != nil) {
		return credits, c.looseErr(p.credits, perr, "expected a list of credits like [{'amount': -1.5, …}]")
	}
	for _, e := range list {
		m, _ := e.(map[string]any)
		amt, ok := m["amount"]
		if !ok {
			continue
		}
		d, ok := creditAmount(amt)
		if !ok {
			return credits, c.errAt(p.credits, ErrNotNumber, "a credit amount is not a number")
		}
		credits = credits.Add(d)
	}
	return credits, nil
}

// creditAmount reads one credit's amount, a number or a numeric string; a
// null amount is zero.
func creditAmount(amt any) (decimal.Decimal, bool) {
	switch a := amt.(type) {
	case number:
		return parseMoney(string(a))
	case string:
		return parseMoney(a)
	case nil:
		return decimal.Zero, true
	}
	return decimal.Decimal{}, false
}

// gcpChargeCategory maps cost_type to a FOCUS ChargeCategory: empty is
// usage, and a value not in gcpCostTypes an adjustment.
func gcpChargeCategory(costType string) ChargeCategory {
	ct := strings.ToLower(costType)
	if ct == "" {
		return ChargeUsage
	}
	if cat, ok := gcpCostTypes[ct]; ok {
		return cat
	}
	return ChargeAdjustment
}

// billingPeriodStart returns the month invoice.month names (YYYYMM), or the
// month of the charge when the cell is empty.
func (p *gcpParser) billingPeriodStart(c *rowCtx, chargeStart time.Time) (time.Time, error) {
	m := c.text(p.invoiceMonth)
	if m == "" {
		return monthStart(chargeStart), nil
	}
	if len(m) != 6 || !isDigits(m) {
		return time.Time{}, c.errAt(p.invoiceMonth, ErrNotDate, "expected YYYYMM")
	}
	t, err := time.Parse("200601", m)
	if err != nil {
		return time.Time{}, c.errAt(p.invoiceMonth, ErrNotDate, "expected YYYYMM")
	}
	if err := c.inRange(p.invoiceMonth, t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// tags records the row's labels: project labels first so resource labels
// override them.
func (p *gcpParser) tags(c *rowCtx) error {
	for _, col := range []int{p.projectLabels, p.gcpTags, p.labels} {
		if col < 0 {
			continue
		}
		if err := parseTagMap(c.raw(col), c.tag); err != nil {
			return c.looseErr(col, err, "expected labels like [{'key': 'team', 'value': 'ml'}]")
		}
	}
	if p.labelKey >= 0 && p.labelValue >= 0 {
		c.tag(c.text(p.labelKey), c.text(p.labelValue))
	}
	return nil
}

// gpu sets the row's GPU fields. Accelerator SKUs name the GPU and count
// GPU-time directly; other rows may be machine types with GPUs.
func (p *gcpParser) gpu(c *rowCtx, row *Row) {
	if gpu, ok := gcpGPUFromSKU(row.SKU); ok && row.ChargeCategory == ChargeUsage {
		hours, isHours := p.usageHours(c)
		if isHours {
			row.GPUType = gpu
			row.GPUHours = hours
			if ph := hoursBetween(row.ChargePeriodStart, row.ChargePeriodEnd); ph.Sign() > 0 {
				row.GPUCount = hours.Div(ph).Round(2)
			}
		}
		return
	}
	if p.opts.GPUs == nil || p.systemLabels < 0 {
		return
	}
	// Machine types with GPUs: record the GPU, but count hours from the
	// accelerator SKU rows only, which GCP bills separately.
	setGPU(row, p.opts.GPUs, "gcp", p.machineSpecLabel(c), decimal.Zero, false)
}

// machineSpecLabel returns the machine type system_labels names
// (compute.googleapis.com/machine_spec), or "".
func (p *gcpParser) machineSpecLabel(c *rowCtx) string {
	p.machineSpec = ""
	_ = parseTagMap(c.raw(p.systemLabels), func(k, v string) {
		if k == "compute.googleapis.com/machine_spec" {
			p.machineSpec = v
		}
	})
	return p.machineSpec
}

// usageHours returns the usage in hours when the unit is time.
func (p *gcpParser) usageHours(c *rowCtx) (decimal.Decimal, bool) {
	switch strings.ToLower(c.text(p.usageUnit)) {
	case "seconds", "second", "s":
		d, ok := parseDecimal(c.raw(p.usageAmount))
		return d.Div(hour), ok
	case "hour", "hours", "h":
		d, ok := parseDecimal(c.raw(p.usageAmount))
		return d, ok
	}
	if strings.Contains(strings.ToLower(c.text(p.pricingUnit)), "hour") {
		d, ok := parseDecimal(c.raw(p.pricingAmount))
		return d, ok
	}
	return decimal.Zero, false
}

func gcpServiceCategory(service string) string {
	switch service {
	case "Compute Engine", "Kubernetes Engine", "Cloud Run", "Cloud Functions", "App Engine":
		return "Compute"
	case "Cloud Storage", "Filestore":
		return "Storage"
	case "BigQuery", "Dataflow", "Dataproc", "Pub/Sub":
		return "Analytics"
	case "Cloud SQL", "Cloud Spanner", "Firestore", "Bigtable", "Memorystore for Redis":
		return "Databases"
	case "Vertex AI", "Gemini API", "Cloud TPU":
		return "AI and Machine Learning"
	case "Networking", "Cloud CDN", "Cloud DNS":
		return "Networking"
	case "Cloud Logging", "Stackdriver Logging", "Cloud Monitoring", "Stackdriver Monitoring":
		return "Management and Governance"
	case "Security Command Center", "Secret Manager", "Cloud Key Management Service (KMS)":
		return "Security"
	}
	return "Other"
}
