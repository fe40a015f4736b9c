"""What every test shares: Hypothesis judges the examples, not how fast a busy machine draws them."""
from hypothesis import HealthCheck, settings

# Two workers on CI's two cores make drawing and running an example slower now and then; a deadline or a
# too-slow health check would then fail a test (or call it flaky) for the machine's load, not for the code.
settings.register_profile("botflow", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("botflow")
