package ingest

import (
	"strings"
)

// One provider, one name: every source writes the same provider its own
// way ("openai" in a LiteLLM log, "OpenAI" in OpenAI's export, "Microsoft"
// in an Azure FOCUS file), and the dashboard would show each spelling as a
// provider of its own. The Reader gives every row the canonical name and
// keeps the file's spelling beside it (Row.ProviderRaw; see
// docs/data-model.md). Migration 000012 applies the same table to rows
// imported before, so a name added here for rows already stored needs a
// migration of its own.

// canonicalProviders maps a provider's spellings, as providerKey folds them,
// to its display name.
var canonicalProviders = map[string]string{
	"aws": "AWS", "amazon": "AWS", "amazon web services": "AWS", "amazon aws": "AWS", "amazon web services inc": "AWS",
	"bedrock": "AWS", "aws bedrock": "AWS", "amazon bedrock": "AWS", "bedrock converse": "AWS", "sagemaker": "AWS",

	"google cloud": "Google Cloud", "gcp": "Google Cloud", "google": "Google Cloud", "google cloud platform": "Google Cloud",
	"vertex ai": "Google Cloud", "vertex ai beta": "Google Cloud", "vertexai": "Google Cloud", "gemini": "Google Cloud",

	"microsoft azure": "Microsoft Azure", "microsoft": "Microsoft Azure", "azure": "Microsoft Azure",
	"azure ai": "Microsoft Azure", "azure openai": "Microsoft Azure", "azure text": "Microsoft Azure",

	"oracle cloud": "Oracle Cloud", "oracle": "Oracle Cloud", "oci": "Oracle Cloud",
	"oracle cloud infrastructure": "Oracle Cloud",

	"openai": "OpenAI", "open ai": "OpenAI", "text completion openai": "OpenAI",
	"anthropic":  "Anthropic",
	"openrouter": "OpenRouter", "open router": "OpenRouter",
	"litellm": "LiteLLM",
	"mistral": "Mistral AI", "mistral ai": "Mistral AI", "mistralai": "Mistral AI",
	"cohere": "Cohere", "cohere chat": "Cohere",
	"groq":        "Groq",
	"together ai": "Together AI", "togetherai": "Together AI", "together": "Together AI",
	"fireworks ai": "Fireworks AI", "fireworks": "Fireworks AI",
	"deepseek": "DeepSeek",
	"xai":      "xAI", "x ai": "xAI",
	"perplexity":  "Perplexity",
	"huggingface": "Hugging Face", "hugging face": "Hugging Face",
	"replicate":   "Replicate",
	"databricks":  "Databricks",
	"cloudflare":  "Cloudflare",
	"cerebras":    "Cerebras",
	"coreweave":   "CoreWeave",
	"lambda labs": "Lambda", "lambda": "Lambda",
}

// awsServiceNames maps AWS product codes, which rows without a product name
// carry instead (CUR's lineItem/ProductCode), to the product names other
// rows and FOCUS files use.
var awsServiceNames = map[string]string{
	"AmazonEC2":         "Amazon Elastic Compute Cloud",
	"AmazonS3":          "Amazon Simple Storage Service",
	"AmazonSageMaker":   "Amazon SageMaker",
	"AmazonBedrock":     "Amazon Bedrock",
	"AmazonRDS":         "Amazon Relational Database Service",
	"AWSLambda":         "AWS Lambda",
	"AmazonVPC":         "Amazon Virtual Private Cloud",
	"AWSDataTransfer":   "AWS Data Transfer",
	"AmazonEKS":         "Amazon Elastic Kubernetes Service",
	"AmazonECS":         "Amazon Elastic Container Service",
	"AmazonECR":         "Amazon EC2 Container Registry (ECR)",
	"AmazonDynamoDB":    "Amazon DynamoDB",
	"AmazonCloudFront":  "Amazon CloudFront",
	"AmazonRoute53":     "Amazon Route 53",
	"AWSELB":            "Elastic Load Balancing",
	"AmazonEFS":         "Amazon Elastic File System",
	"AmazonFSx":         "Amazon FSx",
	"AmazonRedshift":    "Amazon Redshift",
	"AmazonElastiCache": "Amazon ElastiCache",
	"AWSGlue":           "AWS Glue",
	"AmazonAthena":      "Amazon Athena",
	"awskms":            "AWS Key Management Service",
	"AWSSecretsManager": "AWS Secrets Manager",
	"AmazonSNS":         "Amazon Simple Notification Service",
	"AWSQueueService":   "Amazon Simple Queue Service",
}

// providerKey folds a spelling: case, surrounding space, and _ or - for a
// space ("vertex_ai", "Vertex AI" and "vertex-ai" are one key). Migration
// 000012 folds the same way: lower(translate(btrim(name), '_-', '  ')).
func providerKey(raw string) string {
	k := strings.ToLower(strings.TrimSpace(raw))
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return ' '
		}
		return r
	}, k)
}

// CanonicalProvider returns the display name of the provider raw names, as
// every page, filter and the API show it: "AWS", "Google Cloud",
// "Microsoft Azure", "Oracle Cloud", "OpenAI", "Anthropic", "OpenRouter",
// …, whichever way a source spells it (LiteLLM's "vertex_ai" or "bedrock"
// included). A name it does not know comes back trimmed, as written.
func CanonicalProvider(raw string) string {
	if name, ok := canonicalProviders[providerKey(raw)]; ok {
		return name
	}
	return strings.TrimSpace(raw)
}

// CanonicalService returns the service name other sources use for raw, a
// service of provider (canonical). Only AWS's product codes differ from
// the names today; anything else comes back as written.
func CanonicalService(provider, raw string) string {
	if provider == "AWS" {
		if name, ok := awsServiceNames[raw]; ok {
			return name
		}
	}
	return raw
}

// canonicalNames gives row its canonical provider and service names, and
// keeps what the file wrote when it differs. Rows of one file mostly share
// their names, so the last answer is remembered.
type canonicalNames struct {
	lastProvider, lastProviderName string
}

func (n *canonicalNames) apply(row *Row) {
	raw := row.ProviderName
	if raw != n.lastProvider || n.lastProviderName == "" {
		n.lastProvider, n.lastProviderName = raw, CanonicalProvider(raw)
	}
	if name := n.lastProviderName; name != raw {
		row.ProviderRaw, row.ProviderName = raw, name
	}
	if s := CanonicalService(row.ProviderName, row.ServiceName); s != row.ServiceName {
		row.ServiceRaw, row.ServiceName = row.ServiceName, s
	}
}
