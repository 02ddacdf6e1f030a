"""Chapter 01, two axes: the residual stream as the depth path (a running sum of block outputs), direct and
total effects, the logit lens."""
