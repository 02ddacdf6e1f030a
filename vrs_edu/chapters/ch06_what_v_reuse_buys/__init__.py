"""Chapter 06, what V reuse buys: KV-cache bytes against loss, and the value tables' interpretability."""
