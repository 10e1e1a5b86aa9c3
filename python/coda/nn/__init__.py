# SPDX-License-Identifier: BSD-3-Clause
"""The Llama block as CODA runs it: layers, their autograd Functions, the model-level pieces."""
from .cross_entropy import LinearCrossEntropy
from .config import UnsupportedModel, check_config, layer_dims
from .layer import CodaDecoderLayer, Documents, ResidualState, attention, documents_from_positions, first_state
from .model import causal_lm_loss, final_norm, run_layers

__all__ = ["CodaDecoderLayer", "LinearCrossEntropy", "Documents", "ResidualState", "UnsupportedModel", "attention", "causal_lm_loss",
           "check_config", "documents_from_positions", "final_norm", "first_state", "layer_dims", "run_layers"]
