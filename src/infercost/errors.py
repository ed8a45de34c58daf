"""Errors the user can cause. Each names the field at fault and reads as one line."""

from __future__ import annotations


class InferCostError(ValueError):
    """Bad input: `field` names what is wrong, str(self) is the one-line message."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ScenarioError(InferCostError):
    """A scenario value out of bounds or of the wrong type."""


class UnknownNameError(InferCostError):
    """A model or accelerator id that the catalog does not hold."""


class ConfigError(InferCostError):
    """A Hugging Face config.json that is malformed or describes an unsupported architecture."""
