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

	// per-row scratch
	machineSpec string
}

func newGCP(h *header, o *Options) (parser, error) {
	p := &gcpParser{opts: o}
	p.account = h.col("billing_account_id")
	p.service = h.col("service.description")
	p.sku = h.col("sku.description")
	p.start = h.col("usage_start_time")
	p.end = h.col("usage_end_time")
	p.project = h.col("project.id")
	p.labels = h.col("labels")
	p.projectLabels = h.col("project.labels")
	p.gcpTags = h.col("tags")
	p.systemLabels = h.col("system_labels")
	p.region = h.col("location.region")
	p.location = h.col("location.location")
	p.cost = h.col("cost")
	p.costAtList = h.col("cost_at_list")
	p.currency = h.col("currency")
	p.usageAmount = h.col("usage.amount")
	p.usageUnit = h.col("usage.unit")
	p.pricingAmount = h.col("usage.amount_in_pricing_units")
	p.pricingUnit = h.col("usage.pricing_unit")
	p.credits = h.col("credits")
	p.invoiceMonth = h.col("invoice.month")
	p.costType = h.col("cost_type")
	p.resourceName = h.col("resource.global_name", "resource.name")
	for _, need := range []struct {
		idx  int
		name string
	}{{p.cost, "cost"}, {p.start, "usage_start_time"}} {
		if need.idx < 0 {
			return nil, &ParseError{Err: ErrMissingColumn, Msg: need.name + " (needed by gcp-billing)"}
		}
	}
	return p, nil
}

var gcpCostTypes = map[string]ChargeCategory{
	"regular": ChargeUsage, "tax": ChargeTax, "adjustment": ChargeAdjustment, "rounding_error": ChargeAdjustment,
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

	cost, err := c.money(p.cost)
	if err != nil {
		return err
	}
	// Credits live inside the row: billed = cost + sum(credits.amount).
	credits := decimal.Zero
	if s := c.text(p.credits); s != "" && s != "[]" {
		v, perr := parseLoose(s)
		list, ok := v.([]any)
		if perr != nil || (!ok && v != nil) {
			return c.looseErr(p.credits, perr, "expected a list of credits like [{'amount': -1.5, …}]")
		}
		for _, e := range list {
			m, _ := e.(map[string]any)
			amt, ok := m["amount"]
			if !ok {
				continue
			}
			var d decimal.Decimal
			switch a := amt.(type) {
			case number:
				d, ok = parseMoney(string(a))
			case string:
				d, ok = parseMoney(a)
			case nil:
				d, ok = decimal.Zero, true
			default:
				ok = false
			}
			if !ok {
				return c.errAt(p.credits, ErrNotNumber, "a credit amount is not a number")
			}
			credits = credits.Add(d)
		}
	}
	row.BilledCost = cost.Add(credits)
	row.EffectiveCost = row.BilledCost
	if row.ListCost, err = c.moneyOr(p.costAtList, cost); err != nil {
		return err
	}
	row.BillingCurrency = strings.ToUpper(c.text(p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = "USD"
	}
	row.ChargeCategory = ChargeUsage
	if ct := strings.ToLower(c.text(p.costType)); ct != "" {
		if cat, ok := gcpCostTypes[ct]; ok {
			row.ChargeCategory = cat
		} else {
			row.ChargeCategory = ChargeAdjustment
		}
	}

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
	if m := c.text(p.invoiceMonth); len(m) == 6 && isDigits(m) {
		t, perr := time.Parse("200601", m)
		if perr != nil {
			return c.errAt(p.invoiceMonth, ErrNotDate, "expected YYYYMM")
		}
		if err := c.inRange(p.invoiceMonth, t); err != nil {
			return err
		}
		row.BillingPeriodStart = t
	} else if m != "" {
		return c.errAt(p.invoiceMonth, ErrNotDate, "expected YYYYMM")
	} else {
		row.BillingPeriodStart = monthStart(row.ChargePeriodStart)
	}
	if row.ConsumedQuantity, err = c.dec(p.usageAmount); err != nil {
		return err
	}
	row.ConsumedUnit = c.text(p.usageUnit)

	// Labels: project labels first so resource labels override them.
	for _, col := range []int{p.projectLabels, p.gcpTags, p.labels} {
		if col < 0 {
			continue
		}
		if err := parseTagMap(c.raw(col), c.tag); err != nil {
			return c.looseErr(col, err, "expected labels like [{'key': 'team', 'value': 'ml'}]")
		}
	}

	// GPUs: accelerator SKUs name the GPU and count GPU-time directly.
	if gpu, ok := gcpGPUFromSKU(row.SKU); ok && row.ChargeCategory == ChargeUsage {
		hours, isHours := p.usageHours(c)
		if isHours {
			row.GPUType = gpu
			row.GPUHours = hours
			if ph := hoursBetween(row.ChargePeriodStart, row.ChargePeriodEnd); ph.Sign() > 0 {
				row.GPUCount = hours.Div(ph).Round(2)
			}
		}
	} else if p.opts.GPUs != nil && p.systemLabels >= 0 {
		// Machine types with GPUs: record the GPU, but count hours from the
		// accelerator SKU rows only, which GCP bills separately.
		p.machineSpec = ""
		_ = parseTagMap(c.raw(p.systemLabels), func(k, v string) {
			if k == "compute.googleapis.com/machine_spec" {
				p.machineSpec = v
			}
		})
		setGPU(row, p.opts.GPUs, "gcp", p.machineSpec, decimal.Zero, false)
	}
	return nil
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
