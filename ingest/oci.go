package ingest

import (
	"regexp"
	"strings"
)

// ociProvider is the provider name of every Oracle Cloud row.
const ociProvider = "Oracle Cloud"

// ociParser reads Oracle Cloud Infrastructure cost reports in OCI's own
// format (`lineItem/…`, `product/…`, `usage/…`, `cost/…`, `tags/…`
// columns; see docs/import-formats.md, oci-cost).
//
// OCI writes a new report every few hours with the rows of those hours
// only: a report is not a restatement of its month, so its rows meet
// earlier imports by their line item's reference number, not by billing
// period.
type ociParser struct {
	opts *Options
	ref, tenant, start, end, service, resource, compartmentID, compartmentName,
	region, resourceID, quantity, sku, description, myCost, currency, unit,
	correction int
	tags []tagCol
}

func newOCI(h *header, o *Options) (parser, error) {
	p := &ociParser{opts: o}
	p.ref = h.col("lineItem/referenceNo")
	p.tenant = h.col("lineItem/tenantId")
	p.start = h.col("lineItem/intervalUsageStart")
	p.end = h.col("lineItem/intervalUsageEnd")
	p.service = h.col("product/service")
	p.resource = h.col("product/resource")
	p.compartmentID = h.col("product/compartmentId")
	p.compartmentName = h.col("product/compartmentName")
	p.region = h.col("product/region")
	p.resourceID = h.col("product/resourceId")
	p.quantity = h.col("usage/billedQuantity")
	p.sku = h.col("cost/productSku")
	p.description = h.col("product/Description")
	p.myCost = h.col("cost/myCost")
	p.currency = h.col("cost/currencyCode")
	p.unit = h.col("cost/billingUnitReadable", "cost/skuUnitDescription")
	p.correction = h.col("lineItem/isCorrection")
	for _, need := range []struct {
		idx  int
		name string
	}{{p.myCost, "cost/myCost"}, {p.start, "lineItem/intervalUsageStart"}, {p.ref, "lineItem/referenceNo"}} {
		if need.idx < 0 {
			return nil, &ParseError{Err: ErrMissingColumn, Msg: need.name + " (needed by oci-cost)"}
		}
		h.need(need.idx)
	}
	for i, n := range h.names {
		if k, ok := cutPrefixFold(n, "tags/"); ok && k != "" {
			p.tags = append(p.tags, tagCol{i, k})
		}
	}
	return p, nil
}

// cutPrefixFold is strings.CutPrefix ignoring the prefix's case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// ociServiceCategories maps OCI's product/service codes to FOCUS service
// categories.
var ociServiceCategories = map[string]string{
	"compute": "Compute", "functions": "Compute", "container_engine": "Compute", "oke": "Compute",
	"block_storage": "Storage", "object_storage": "Storage", "objectstore": "Storage", "file_storage": "Storage",
	"network": "Networking", "networking": "Networking", "load_balancer": "Networking", "fastconnect": "Networking",
	"database": "Databases", "autonomous_database": "Databases", "mysql": "Databases",
	"data_science": "AI and Machine Learning", "generative_ai": "AI and Machine Learning", "ai_services": "AI and Machine Learning",
	"logging": "Management and Governance", "monitoring": "Management and Governance",
}

func (p *ociParser) parse(c *rowCtx, row *Row) error {
	var err error
	row.ProviderName = ociProvider
	if row.DedupeKey = c.text(p.ref); row.DedupeKey == "" {
		return c.errAt(p.ref, ErrEmptyValue, "every OCI line item has a reference number")
	}
	if row.ChargePeriodStart, err = c.time(p.start); err != nil {
		return err
	}
	if row.ChargePeriodEnd, err = c.timeOpt(p.end); err != nil {
		return err
	}
	row.ChargePeriodEnd = endOrDay(row.ChargePeriodStart, row.ChargePeriodEnd)
	row.BillingPeriodStart = monthStart(row.ChargePeriodStart)
	row.BillingAccountID = c.text(p.tenant)
	if row.BilledCost, err = c.money(p.myCost); err != nil {
		return err
	}
	row.EffectiveCost, row.ListCost = row.BilledCost, row.BilledCost
	row.BillingCurrency = strings.ToUpper(c.text(p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = "USD"
	}
	// A correction is a row of its own that amends an earlier one (its
	// backreferenceNo); both stay, so that the report adds up to the bill.
	switch {
	case strings.EqualFold(c.text(p.correction), "true"):
		row.ChargeCategory = ChargeAdjustment
	case row.BilledCost.Sign() < 0:
		row.ChargeCategory = ChargeCredit
	default:
		row.ChargeCategory = ChargeUsage
	}
	row.ServiceName = c.text(p.service)
	row.ServiceCategory = ociServiceCategories[strings.ToLower(row.ServiceName)]
	if row.ServiceCategory == "" {
		row.ServiceCategory = "Other"
	}
	row.SKU = c.text(p.description)
	if row.SKU == "" {
		row.SKU = c.text(p.sku)
	}
	row.ResourceID = c.text(p.resourceID)
	row.RegionID = c.text(p.region)
	row.SubAccountID = c.text(p.compartmentName)
	if row.SubAccountID == "" {
		row.SubAccountID = c.text(p.compartmentID)
	}
	if row.ConsumedQuantity, err = c.dec(p.quantity); err != nil {
		return err
	}
	row.ConsumedUnit = c.text(p.unit)
	for _, t := range p.tags {
		v := c.text(t.idx)
		c.tag(t.key, v)
		ociTeam(row, c.team, t.key, v)
	}
	ociGPU(row, p.opts.GPUs, c.text(p.description), c.text(p.resource))
	return nil
}

// ociTeam takes the team from a defined tag whose key, past its namespace
// ("Finance.team"), is the org's team tag key.
func ociTeam(row *Row, teamKey, key, value string) {
	if row.Team != "" || value == "" {
		return
	}
	if dot := strings.LastIndexByte(key, '.'); dot >= 0 && strings.EqualFold(key[dot+1:], teamKey) {
		row.Team = value
	}
}

// ociShape matches an OCI GPU shape name: BM.GPU.H100.8, VM.GPU.A10.1,
// BM.GPU4.8, BM.GPU.A100-v2.8.
var ociShape = regexp.MustCompile(`(?i)\b(?:BM|VM)\.GPU[A-Za-z0-9.\-]*\.\d+\b`)

// ociGPUNames are the GPU names OCI's product descriptions use ("Compute -
// GPU - H100"), longest first where one is a prefix of another.
var ociGPUNames = []struct{ word, gpu string }{
	{"GB300", "GB300"}, {"GB200", "GB200"}, {"B300", "B300"}, {"B200", "B200"}, {"H200", "H200"}, {"H100", "H100"},
	{"A100", "A100"}, {"A10", "A10"}, {"L40S", "L40S"}, {"V100", "V100"}, {"P100", "P100"},
	{"MI355X", "MI355X"}, {"MI300X", "MI300X"},
}

// ociGPU fills the GPU fields of an OCI row. A shape named in the row
// (texts: the description, resource and the like) is looked up in the GPU
// catalog under "oci"; otherwise a GPU SKU ("Compute - GPU - H100"),
// which OCI bills per GPU-hour, gives the GPU and its hours.
func ociGPU(row *Row, m GPUMapper, texts ...string) {
	if row.ChargeCategory != ChargeUsage {
		return
	}
	unit := strings.ToLower(row.ConsumedUnit)
	perGPU := strings.Contains(unit, "gpu")
	for _, s := range texts {
		if shape := ociShape.FindString(s); shape != "" {
			setGPU(row, m, "oci", shape, row.ConsumedQuantity, !perGPU && isHourUnit(unit))
			if perGPU && row.GPUType != "" {
				row.GPUHours = row.ConsumedQuantity
			}
			return
		}
	}
	for _, s := range texts {
		u := strings.ToUpper(s)
		if !strings.Contains(u, "GPU") {
			continue
		}
		for _, w := range strings.FieldsFunc(u, func(r rune) bool { return r == ' ' || r == '-' || r == ',' || r == '(' || r == ')' }) {
			for _, g := range ociGPUNames {
				if w == g.word {
					row.GPUType = g.gpu
					if perGPU || isHourUnit(unit) {
						row.GPUHours = row.ConsumedQuantity
						if h := hoursBetween(row.ChargePeriodStart, row.ChargePeriodEnd); h.Sign() > 0 {
							row.GPUCount = row.ConsumedQuantity.Div(h).Round(2)
						}
					}
					return
				}
			}
		}
	}
}

// ociProviderName reports whether a FOCUS ProviderName is Oracle's.
func ociProviderName(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "oracle", "oci", "oracle cloud", "oracle cloud infrastructure":
		return true
	}
	return false
}
