package ingest

import (
	"strings"

	"github.com/shopspring/decimal"
)

// awsParser reads AWS Cost and Usage Reports: legacy CUR (aws-cur,
// "lineItem/UnblendedCost") and CUR 2.0 / Athena snake_case (aws-cur2).
type awsParser struct {
	opts *Options
	src  Source

	lineItemType, start, end, interval, productCode, usageType, az, resourceID,
	usageAmount, currency, unblended, publicOnDemand, productName, productFamily,
	region, instanceType, usageAccount, payer, billStart, pricingUnit,
	spEffective, riEffective, riUnusedAmort, riUnusedRecurring, riARN,
	spTotalCommit, spUsedCommit int

	tagCols    []tagCol // one column per activated tag
	catCols    []tagCol // one column per cost category
	tagMap     int      // CUR 2.0 map columns
	catMap     int
	productMap int

	// per-file scratch, reused across rows
	prodInstance, prodRegion string
}

type tagCol struct {
	idx int
	key string
}

func newAWSCUR(h *header, o *Options) (parser, error) {
	p := &awsParser{opts: o, src: SourceAWSCUR, tagMap: -1, catMap: -1, productMap: -1}
	p.lineItemType = h.col("lineItem/LineItemType")
	p.start = h.col("lineItem/UsageStartDate")
	p.end = h.col("lineItem/UsageEndDate")
	p.interval = h.col("identity/TimeInterval")
	p.productCode = h.col("lineItem/ProductCode")
	p.usageType = h.col("lineItem/UsageType")
	p.az = h.col("lineItem/AvailabilityZone")
	p.resourceID = h.col("lineItem/ResourceId")
	p.usageAmount = h.col("lineItem/UsageAmount")
	p.currency = h.col("lineItem/CurrencyCode")
	p.unblended = h.col("lineItem/UnblendedCost")
	p.publicOnDemand = h.col("pricing/publicOnDemandCost")
	p.productName = h.col("product/ProductName")
	p.productFamily = h.col("product/productFamily")
	p.region = h.col("product/region", "product/regionCode")
	p.instanceType = h.col("product/instanceType")
	p.usageAccount = h.col("lineItem/UsageAccountId")
	p.payer = h.col("bill/PayerAccountId")
	p.billStart = h.col("bill/BillingPeriodStartDate")
	p.pricingUnit = h.col("pricing/unit")
	p.spEffective = h.col("savingsPlan/SavingsPlanEffectiveCost")
	p.riEffective = h.col("reservation/EffectiveCost")
	p.riUnusedAmort = h.col("reservation/UnusedAmortizedUpfrontFeeForBillingPeriod")
	p.riUnusedRecurring = h.col("reservation/UnusedRecurringFee")
	p.riARN = h.col("reservation/ReservationARN")
	p.spTotalCommit = h.col("savingsPlan/TotalCommitmentToDate")
	p.spUsedCommit = h.col("savingsPlan/UsedCommitment")
	for i, n := range h.names {
		switch {
		case strings.HasPrefix(n, "resourceTags/"):
			k := strings.TrimPrefix(n, "resourceTags/")
			k = strings.TrimPrefix(k, "user:")
			p.tagCols = append(p.tagCols, tagCol{i, k})
		case strings.HasPrefix(n, costCategoryPrefix):
			p.catCols = append(p.catCols, tagCol{i, n})
		}
	}
	return p, p.check(h, "lineItem/UnblendedCost", "lineItem/UsageStartDate")
}

func newAWSCUR2(h *header, o *Options) (parser, error) {
	p := &awsParser{opts: o, src: SourceAWSCUR2}
	p.lineItemType = h.col("line_item_line_item_type")
	p.start = h.col("line_item_usage_start_date")
	p.end = h.col("line_item_usage_end_date")
	p.interval = h.col("identity_time_interval")
	p.productCode = h.col("line_item_product_code")
	p.usageType = h.col("line_item_usage_type")
	p.az = h.col("line_item_availability_zone")
	p.resourceID = h.col("line_item_resource_id")
	p.usageAmount = h.col("line_item_usage_amount")
	p.currency = h.col("line_item_currency_code")
	p.unblended = h.col("line_item_unblended_cost")
	p.publicOnDemand = h.col("pricing_public_on_demand_cost")
	p.productName = h.col("product_product_name")
	p.productFamily = h.col("product_product_family")
	p.region = h.col("product_region_code", "product_region")
	p.instanceType = h.col("product_instance_type")
	p.usageAccount = h.col("line_item_usage_account_id")
	p.payer = h.col("bill_payer_account_id")
	p.billStart = h.col("bill_billing_period_start_date")
	p.pricingUnit = h.col("pricing_unit")
	p.spEffective = h.col("savings_plan_savings_plan_effective_cost")
	p.riEffective = h.col("reservation_effective_cost")
	p.riUnusedAmort = h.col("reservation_unused_amortized_upfront_fee_for_billing_period")
	p.riUnusedRecurring = h.col("reservation_unused_recurring_fee")
	p.riARN = h.col("reservation_reservation_a_r_n")
	p.spTotalCommit = h.col("savings_plan_total_commitment_to_date")
	p.spUsedCommit = h.col("savings_plan_used_commitment")
	p.tagMap = h.col("resource_tags")
	p.catMap = h.col("cost_category")
	p.productMap = h.col("product")
	for i, n := range h.names {
		ln := strings.ToLower(n)
		switch {
		case strings.HasPrefix(ln, "resource_tags_"):
			p.tagCols = append(p.tagCols, tagCol{i, cur2TagKey(n[len("resource_tags_"):])})
		case strings.HasPrefix(ln, "cost_category_"):
			p.catCols = append(p.catCols, tagCol{i, costCategoryPrefix + n[len("cost_category_"):]})
		}
	}
	return p, p.check(h, "line_item_unblended_cost", "line_item_usage_start_date")
}

// cur2TagKey maps CUR 2.0 tag keys ("user_team", "aws_created_by") to the
// key the user chose ("team"); AWS-generated tags keep their prefix.
func cur2TagKey(k string) string {
	if rest, ok := strings.CutPrefix(k, "user_"); ok {
		return rest
	}
	return k
}

// surplusOK lets a legacy CUR header end in tag and cost-category names that
// no record has cells for. The koku project's CUR sample has such a header
// (one name more than its rows; docs/import-formats.md); allowing only tag
// columns keeps a row cut short before its costs an error.
func (p *awsParser) surplusOK(names []string) bool {
	if p.src != SourceAWSCUR || len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "resourceTags/") && !strings.HasPrefix(n, costCategoryPrefix) {
			return false
		}
	}
	return true
}

func (p *awsParser) check(h *header, cost, start string) error {
	if p.unblended < 0 {
		return &ParseError{Err: ErrMissingColumn, Msg: cost + " (needed by " + string(p.src) + ")"}
	}
	if p.start < 0 && p.interval < 0 {
		return &ParseError{Err: ErrMissingColumn, Msg: start + " (needed by " + string(p.src) + ")"}
	}
	h.need(p.unblended, p.start)
	if p.start < 0 {
		h.need(p.interval)
	}
	return nil
}

// awsCategories maps LineItemType to FOCUS ChargeCategory.
var awsCategories = map[string]ChargeCategory{
	"Usage": ChargeUsage, "DiscountedUsage": ChargeUsage, "SavingsPlanCoveredUsage": ChargeUsage,
	"SavingsPlanNegation": ChargeUsage, "Fee": ChargePurchase, "RIFee": ChargePurchase,
	"SavingsPlanRecurringFee": ChargePurchase, "SavingsPlanUpfrontFee": ChargePurchase,
	"Tax": ChargeTax, "Credit": ChargeCredit, "Refund": ChargeCredit, "EdpDiscount": ChargeCredit,
	"BundledDiscount": ChargeCredit, "PrivateRateDiscount": ChargeCredit, "Discount": ChargeCredit,
	"DistributorDiscount": ChargeCredit,
}

// awsServiceCategories maps common product codes to FOCUS ServiceCategory.
var awsServiceCategories = map[string]string{
	"AmazonEC2": "Compute", "AWSLambda": "Compute", "AmazonECS": "Compute", "AmazonEKS": "Compute",
	"AmazonS3": "Storage", "AmazonEFS": "Storage", "AmazonFSx": "Storage", "AmazonGlacier": "Storage",
	"AmazonRDS": "Databases", "AmazonDynamoDB": "Databases", "AmazonRedshift": "Analytics",
	"AmazonAthena": "Analytics", "AmazonSageMaker": "AI and Machine Learning", "AmazonBedrock": "AI and Machine Learning",
	"AWSDataTransfer": "Networking", "AmazonCloudFront": "Networking", "AmazonVPC": "Networking",
	"AmazonCloudWatch": "Management and Governance", "AWSCloudTrail": "Management and Governance",
	"AmazonSQS": "Integration", "AmazonSNS": "Integration",
}

// awsRegionPrefixes maps usage-type prefixes to region codes.
var awsRegionPrefixes = map[string]string{
	"USE1": "us-east-1", "USE2": "us-east-2", "USW1": "us-west-1", "USW2": "us-west-2",
	"EUW1": "eu-west-1", "EUW2": "eu-west-2", "EUW3": "eu-west-3", "EUC1": "eu-central-1",
	"EUN1": "eu-north-1", "APN1": "ap-northeast-1", "APN2": "ap-northeast-2", "APS1": "ap-southeast-1",
	"APS2": "ap-southeast-2", "APS3": "ap-south-1", "CAN1": "ca-central-1", "SAE1": "sa-east-1",
}

func (p *awsParser) parse(c *rowCtx, row *Row) error {
	var err error
	row.ProviderName = "AWS"
	lit := c.text(p.lineItemType)
	row.ChargeCategory = awsChargeCategory(lit)
	if err = p.chargePeriod(c, row); err != nil {
		return err
	}
	if row.BillingPeriodStart, err = c.timeOpt(p.billStart); err != nil {
		return err
	}
	if row.BillingPeriodStart.IsZero() {
		row.BillingPeriodStart = monthStart(row.ChargePeriodStart)
	}
	if err = p.lineItemCosts(c, lit, row); err != nil {
		return err
	}
	if row.ConsumedQuantity, err = c.dec(p.usageAmount); err != nil {
		return err
	}
	row.ConsumedUnit = c.text(p.pricingUnit)

	row.ServiceName, row.ServiceCategory = p.service(c)
	row.SKU = c.text(p.usageType)
	row.ResourceID = c.text(p.resourceID)
	row.SubAccountID, row.BillingAccountID = p.accounts(c)
	if err = p.tags(c); err != nil {
		return err
	}

	instance, region := p.productInstanceRegion(c)
	row.RegionID = region
	if row.RegionID == "" {
		row.RegionID = awsRegion(c.text(p.az), row.SKU)
	}

	// GPUs: instance type from the product columns or the usage type.
	utInstance, compute := awsInstanceFromUsageType(row.SKU)
	if instance == "" {
		instance = utInstance
	}
	setGPU(row, p.opts.GPUs, "aws", instance, row.ConsumedQuantity, awsCountsGPUHours(row, lit, compute))
	return nil
}

// awsChargeCategory maps a LineItemType to its FOCUS ChargeCategory: a row
// without one is usage, and a type not in awsCategories an adjustment.
func awsChargeCategory(lineItemType string) ChargeCategory {
	if lineItemType == "" {
		return ChargeUsage
	}
	cat, ok := awsCategories[lineItemType]
	if !ok {
		return ChargeAdjustment
	}
	return cat
}

// chargePeriod sets the row's charge period from the lineItem dates, or from
// identity/TimeInterval ("start/end") when the start date is empty and the
// file has that column. A period without an end ends where it starts.
func (p *awsParser) chargePeriod(c *rowCtx, row *Row) error {
	var err error
	if c.text(p.start) != "" || p.interval < 0 {
		if row.ChargePeriodStart, err = c.time(p.start); err != nil {
			return err
		}
		if row.ChargePeriodEnd, err = c.timeOpt(p.end); err != nil {
			return err
		}
	} else if err = p.timeInterval(c, row); err != nil {
		return err
	}
	if row.ChargePeriodEnd.IsZero() {
		row.ChargePeriodEnd = row.ChargePeriodStart
	}
	return nil
}

// timeInterval sets the row's charge period from identity/TimeInterval,
// which holds both ends ("2024-01-01T00:00:00Z/2024-01-01T01:00:00Z").
func (p *awsParser) timeInterval(c *rowCtx, row *Row) error {
	a, b, ok := strings.Cut(c.text(p.interval), "/")
	var okA, okB bool
	row.ChargePeriodStart, okA = parseTime(a)
	row.ChargePeriodEnd, okB = parseTime(b)
	if !ok || !okA || !okB {
		return c.errAt(p.interval, ErrNotDate, "expected start/end")
	}
	if err := c.inRange(p.interval, row.ChargePeriodStart); err != nil {
		return err
	}
	return c.inRange(p.interval, row.ChargePeriodEnd)
}

// lineItemCosts sets the billed (unblended), effective (amortised) and list
// costs and the currency, which is USD when the column is empty.
func (p *awsParser) lineItemCosts(c *rowCtx, lit string, row *Row) error {
	var err error
	if row.BilledCost, err = c.money(p.unblended); err != nil {
		return err
	}
	if row.EffectiveCost, err = p.effective(c, lit, row.BilledCost); err != nil {
		return err
	}
	if row.ListCost, err = p.listCost(c, row); err != nil {
		return err
	}
	row.BillingCurrency = strings.ToUpper(c.text(p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = "USD"
	}
	return nil
}

// listCost returns the public on-demand cost. A usage row without one takes
// the billed cost (docs/import-formats.md); any other row has none (zero).
func (p *awsParser) listCost(c *rowCtx, row *Row) (decimal.Decimal, error) {
	switch list := c.text(p.publicOnDemand); {
	case list == c.text(p.unblended):
		return row.BilledCost, nil // the common on-demand case: no second decimal
	case list != "":
		return c.money(p.publicOnDemand)
	case row.ChargeCategory == ChargeUsage:
		return row.BilledCost, nil
	}
	return decimal.Decimal{}, nil
}

// service returns the service name (the product name, else its code) and
// its FOCUS ServiceCategory; data transfer is Networking whichever service
// billed it.
func (p *awsParser) service(c *rowCtx) (name, category string) {
	code := c.text(p.productCode)
	name = c.text(p.productName)
	if name == "" {
		name = code
	}
	category = awsServiceCategories[code]
	if c.text(p.productFamily) == "Data Transfer" {
		category = "Networking"
	}
	if category == "" {
		category = "Other"
	}
	return name, category
}

// accounts returns the usage account and the billing (payer) account, which
// is the usage account when the payer column is empty.
func (p *awsParser) accounts(c *rowCtx) (sub, billing string) {
	sub = c.text(p.usageAccount)
	billing = c.text(p.payer)
	if billing == "" {
		billing = sub
	}
	return sub, billing
}

// tags records the row's tags: explicit columns, then CUR 2.0 map columns.
func (p *awsParser) tags(c *rowCtx) error {
	for _, tc := range p.tagCols {
		c.tag(tc.key, c.text(tc.idx))
	}
	for _, tc := range p.catCols {
		c.tag(tc.key, c.text(tc.idx))
	}
	if p.tagMap >= 0 {
		if err := parseTagMap(c.raw(p.tagMap), func(k, v string) { c.tag(cur2TagKey(k), v) }); err != nil {
			return c.looseErr(p.tagMap, err, "expected a map such as {\"user_team\":\"ml\"}")
		}
	}
	if p.catMap >= 0 {
		if err := parseTagMap(c.raw(p.catMap), func(k, v string) { c.tag(costCategoryPrefix+k, v) }); err != nil {
			return c.looseErr(p.catMap, err, "expected a map such as {\"team\":\"ml\"}")
		}
	}
	return nil
}

// productInstanceRegion returns the instance type and region from the
// product columns, filling either gap from the CUR 2.0 product map column.
func (p *awsParser) productInstanceRegion(c *rowCtx) (instance, region string) {
	instance = c.text(p.instanceType)
	region = c.text(p.region)
	if p.productMap < 0 || (instance != "" && region != "") {
		return instance, region
	}
	p.prodInstance, p.prodRegion = "", ""
	_ = parseTagMap(c.raw(p.productMap), func(k, v string) {
		switch k {
		case "instance_type", "instanceType":
			p.prodInstance = v
		case "region", "region_code", "regionCode":
			p.prodRegion = v
		}
	})
	if instance == "" {
		instance = p.prodInstance
	}
	if region == "" {
		region = p.prodRegion
	}
	return instance, region
}

// awsCountsGPUHours reports whether the row's quantity counts as GPU-hours:
// on usage rows other than Savings Plan negations, when the usage type is
// instance time (compute) or the unit is hours (docs/import-formats.md).
func awsCountsGPUHours(row *Row, lit string, compute bool) bool {
	return row.ChargeCategory == ChargeUsage && lit != "SavingsPlanNegation" &&
		(compute || strings.HasPrefix(row.ConsumedUnit, "Hr") || strings.HasPrefix(row.ConsumedUnit, "Hour"))
}

// effective implements the usual CUR amortisation formula (docs/import-formats.md, "aws-cur").
func (p *awsParser) effective(c *rowCtx, lit string, billed decimal.Decimal) (decimal.Decimal, error) {
	switch lit {
	case "SavingsPlanCoveredUsage":
		return c.moneyOr(p.spEffective, billed)
	case "DiscountedUsage":
		return c.moneyOr(p.riEffective, billed)
	case "SavingsPlanNegation", "SavingsPlanUpfrontFee":
		return decimal.Zero, nil
	case "SavingsPlanRecurringFee":
		if p.spTotalCommit < 0 || p.spUsedCommit < 0 {
			return decimal.Zero, nil
		}
		total, err := c.money(p.spTotalCommit)
		if err != nil {
			return total, err
		}
		used, err := c.money(p.spUsedCommit)
		if err != nil {
			return used, err
		}
		return total.Sub(used), nil
	case "RIFee":
		a, err := c.money(p.riUnusedAmort)
		if err != nil {
			return a, err
		}
		b, err := c.money(p.riUnusedRecurring)
		if err != nil {
			return b, err
		}
		return a.Add(b), nil
	case "Fee":
		if c.text(p.riARN) != "" { // RI upfront fee: amortised into usage
			return decimal.Zero, nil
		}
	}
	return billed, nil
}

// awsRegion derives a region from an availability zone ("us-east-1a") or
// the usage-type prefix ("USW2-BoxUsage:…").
func awsRegion(az, usageType string) string {
	if n := len(az); n > 1 && az[n-1] >= 'a' && az[n-1] <= 'z' && az[n-2] >= '0' && az[n-2] <= '9' {
		return az[:n-1]
	}
	if pre, _, ok := strings.Cut(usageType, "-"); ok {
		if r, ok := awsRegionPrefixes[pre]; ok {
			return r
		}
	}
	return ""
}
