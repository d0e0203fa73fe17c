"""torch.nn's loss modules: each holds its reduction ('none', 'mean' or 'sum'; the legacy
size_average / reduce arguments map to one as torch's _Reduction does) and its constants, and
calls its nn.functional loss. A class weight is a buffer, as in torch."""
import warnings

from .. import functional as F
from .distance import PairwiseDistance
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = F._legacy_reduction(size_average, reduce, reduction)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """|input - target|, reduced."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """-input[n, target[n]] (times weight[target[n]]), targets equal to ignore_index skipped;
    'mean' divides by the total weight of the counted targets."""

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss under its deprecated name."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("NLLLoss2d has been deprecated. Please use NLLLoss instead as a drop-in "
                      "replacement and see "
                      "https://pytorch.org/docs/master/nn.html#torch.nn.NLLLoss for more "
                      "details.")
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class PoissonNLLLoss(_Loss):
    """exp(input) - target * input (log_input), or input - target * log(input + eps); full adds
    Stirling's approximation of log(target!)."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """0.5 * (log(max(var, eps)) + (input - target)² / max(var, eps)), plus 0.5 * log(2π) when
    full."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class KLDivLoss(_Loss):
    """target * (log(target) - input), input given as log-probabilities (and target too when
    log_target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MSELoss(_Loss):
    """(input - target)², reduced."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """-(target * log(input) + (1 - target) * log(1 - input)), input a probability."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """BCELoss of sigmoid(input), computed stably; pos_weight (a buffer) weighs the positive
    term per class."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input where target is 1, max(0, margin - input) where it is -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-class hinge loss between each target class (target's leading non-negative entries)
    and each non-target class."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5 * d² / beta where |d| < beta, |d| - 0.5 * beta elsewhere (d = input - target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 * d² where |d| < delta, delta * (|d| - 0.5 * delta) elsewhere (d = input - target)."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)), target in {-1, 1}."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """NLLLoss of log_softmax(input) over the class dim (1), for class indices or class
    probabilities (a target of input's shape), with label smoothing."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Binary cross-entropy of sigmoid(input) against a 0/1 target, averaged over classes."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (F.ctc_loss): log_probs (T, N, C) or
    (T, C), padded or concatenated targets, and each element's input and target length."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target * (x1 - x2) + margin)."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: Σ_{j != y} max(0, margin - x[y] + x[j])^p / C per sample."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        assert weight is None or weight.dim() == 1
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, d(a, p) - d(a, n) + margin), d the p-norm distance (swap: d(a, n) replaced by
    d(p, n) where that is smaller)."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """TripletMarginLoss with any distance function (a PairwiseDistance module by default)."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        self.distance_function = \
            distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap,
                                                   reduction=self.reduction)


__all__ = ["L1Loss", "CTCLoss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
           "MSELoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss",
           "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
           "CrossEntropyLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss"]
