"""torch.nn's recurrent layers: RNN (tanh or relu), LSTM (with projections) and GRU over whole
sequences (padded or packed), and their one-step cells.

Each layer and direction projects the whole sequence's input in one matmul, then runs one
hidden-state matmul and the gate math per time step; packed sequences shrink (or, running
backwards, grow) the batch as sequences end."""
import math
import numbers
import warnings

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def _step(mode, gi, state, w_hh, b_hh, w_hr):
    """One time step: gi is the step's input projection (with b_ih), state (h,) or (h, c)."""
    hg = F.linear(state[0], w_hh, b_hh)
    if mode == "LSTM":
        h, c = F._lstm_gates(hg + gi, state[1])
        return (h if w_hr is None else F.linear(h, w_hr), c)
    if mode == "GRU":
        return (F._gru_gates(gi, hg, state[0]),)
    act = (hg + gi).tanh() if mode == "RNN_TANH" else (hg + gi).relu()
    return (act,)


def _narrow(state, start, length):
    return tuple(s.narrow(0, start, length) for s in state)


def _direction(mode, x, batch_sizes, state0, weights, reverse):
    """One direction of one layer over packed rows x (step t's batch_sizes[t] rows follow
    step t - 1's): (output rows, final state) with the final state in batch order."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    gi = F.linear(x, w_ih, b_ih)
    offsets = [0]
    for n in batch_sizes:
        offsets.append(offsets[-1] + n)
    steps = len(batch_sizes)
    outputs = [None] * steps
    if not reverse:
        state, finished = state0, []
        for t in range(steps):
            n = batch_sizes[t]
            if n < state[0].size(0):  # the longest sequences run on; the others end here
                finished.append(_narrow(state, n, state[0].size(0) - n))
                state = _narrow(state, 0, n)
            state = _step(mode, gi.narrow(0, offsets[t], n), state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        finished.append(state)
        final = tuple(_factories.cat(parts[::-1]) if len(parts) > 1 else parts[0]
                      for parts in zip(*finished))
    else:
        state = _narrow(state0, 0, batch_sizes[-1])
        for t in reversed(range(steps)):
            n, have = batch_sizes[t], state[0].size(0)
            if n > have:  # sequences that start running (backwards) at this step
                state = tuple(_factories.cat([s, s0.narrow(0, have, n - have)])
                              for s, s0 in zip(state, state0))
            state = _step(mode, gi.narrow(0, offsets[t], n), state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        final = state
    return _factories.cat(outputs) if steps > 1 else outputs[0], final


def _run(mode, x, batch_sizes, hx, flat_weights, bias, num_layers, dropout, training,
         bidirectional, has_proj):
    """The stacked, possibly bidirectional recurrence over packed rows x: (rows of the last
    layer's output, final states stacked per layer and direction, one tensor per state)."""
    if mode == "LSTM" and len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    for t in list(flat_weights) + list(hx):
        if t.dtype != x.dtype:
            raise RuntimeError("mat1 and mat2 must have the same dtype")
    per = 2 + (2 if bias else 0) + (1 if has_proj else 0)
    directions = 2 if bidirectional else 1
    finals = []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            idx = layer * directions + d
            w = flat_weights[idx * per:(idx + 1) * per]
            weights = (w[0], w[1], w[2] if bias else None, w[3] if bias else None,
                       w[-1] if has_proj else None)
            out, final = _direction(mode, x, batch_sizes, tuple(h[idx] for h in hx), weights,
                                    reverse=d == 1)
            outs.append(out)
            finals.append(final)
        x = _factories.cat(outs, 1) if directions == 2 else outs[0]
        if dropout and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, tuple(_factories.stack(parts) for parts in zip(*finals))



def _aten_rnn(mode):
    """torch.<mode>(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) over a padded sequence, or torch.<mode>(data, batch_sizes, hx, params, …,
    bidirectional) over packed rows: the entry points nn's layers call in torch, over the same
    recurrence as tensord's layers. hx is a tensor, or for lstm the pair (h, c) (projections
    when h is narrower than c); params are each layer and direction's weights in order. Returns
    (output, h) or, for lstm, (output, h, c)."""
    name = {"RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}.get(mode, mode.lower())

    padded_names = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
                    "bidirectional", "batch_first")
    packed_names = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers",
                    "dropout", "train", "bidirectional")

    def fn(*args, **kwargs):
        # the packed form has its params fourth (a sequence), the padded form a bool there
        packed = "data" in kwargs or "batch_sizes" in kwargs or (
            len(args) > 3 and isinstance(args[3], (list, tuple)))
        names = packed_names if packed else padded_names
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in given:
                raise TypeError(f"{name}() got an unexpected or repeated argument '{key}'")
            given[key] = value
        if len(args) > len(names) or len(given) != len(names):
            raise TypeError(f"{name}() received an invalid combination of arguments: expected "
                            f"({', '.join(names)})")
        hx = tuple(given["hx"]) if mode == "LSTM" else (given["hx"],)
        params, bias = list(given["params"]), bool(given["has_biases"])
        num_layers, bidirectional = int(given["num_layers"]), bool(given["bidirectional"])
        directions = 2 if bidirectional else 1
        if any(h.size(0) != num_layers * directions for h in hx):
            raise RuntimeError("Expected more hidden states in stacked_rnn")
        has_proj = mode == "LSTM" and hx[0].size(-1) != hx[1].size(-1)
        per = 2 + (2 if bias else 0) + (1 if has_proj else 0)
        if len(params) != per * num_layers * directions:
            raise RuntimeError("got an incorrect number of RNN parameters")
        if packed:
            x, sizes = given["data"], given["batch_sizes"].tolist()
        else:
            input = given["input"]
            if given["batch_first"]:
                input = input.transpose(0, 1)
            steps, batch = input.size(0), input.size(1)
            x, sizes = input.reshape(steps * batch, input.size(2)), [batch] * steps
        out, states = _run(mode, x, sizes, hx, params, bias, num_layers,
                           float(given["dropout"]), bool(given["train"]), bidirectional, has_proj)
        if not packed:
            out = out.view(steps, batch, out.size(-1))
            if given["batch_first"]:
                out = out.transpose(0, 1)
        return (out, *states)
    fn.__name__ = fn.__qualname__ = name
    return fn


# torch's top-level recurrences (tensord/__init__.py puts them in the tensord namespace).
TORCH_FUNCTIONS = {f.__name__: f for f in map(_aten_rnn, ("RNN_TANH", "RNN_RELU", "LSTM", "GRU"))}

class RNNBase(Module):
    """The parameters and forward pass shared by RNN, LSTM and GRU: per layer k (and
    `_reverse` for the second direction) weight_ih_lk, weight_hh_lk, bias_ih_lk, bias_hh_lk and,
    for an LSTM with proj_size, weight_hr_lk, all drawn from U(-1/√hidden, 1/√hidden)."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]
    __jit_unused_properties__ = ["all_weights"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size

        def empty(*shape):
            return Parameter(_factories.empty(shape, device=device, dtype=dtype))

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else \
                    real_hidden_size * num_directions
                params = [empty(gate_size, layer_input_size), empty(gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [empty(gate_size), empty(gate_size)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(empty(proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [x.format(layer, suffix) for x in names]
                for name, param in zip(names, params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None
                              for wn in self._flat_weights_names]

    def __setattr__(self, attr, value):
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            self._flat_weights[self._flat_weights_names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """torch packs the weights into one buffer for cuDNN; tensord keeps them apart, so this
        does nothing."""

    def _apply(self, fn):
        ret = super()._apply(fn)
        self._init_flat_weights()
        return ret

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def _unpack_input(self, input):
        """(data, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch_dim)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, batch_sizes, sorted_indices, unsorted_indices, True, None
        return input, None, None, None, input.dim() == 3, 0 if self.batch_first else 1

    def _forward(self, input, hx, batch_sizes):
        """Runs the checked input and hidden state (a tuple of tensors): (output, states)."""
        packed = batch_sizes is not None
        if packed:
            x, sizes = input, batch_sizes.tolist()
        else:
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.size(0), input.size(1)
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            x, sizes = input.reshape(steps * batch, input.size(2)), [batch] * steps
        out, states = _run(self.mode, x, sizes, hx, self._flat_weights, self.bias,
                           self.num_layers, self.dropout, self.training, self.bidirectional,
                           self.proj_size > 0)
        if not packed:
            out = out.view(steps, batch, out.size(-1))
            if self.batch_first:
                out = out.transpose(0, 1)
        return out, states

    def _zeros(self, input, max_batch_size, size):
        num_directions = 2 if self.bidirectional else 1
        return _factories.zeros(self.num_layers * num_directions, max_batch_size, size,
                                dtype=input.dtype, device=input.device, session=input._session)

    def _forward_hidden(self, input, hx):
        """RNN's and GRU's forward: one hidden state, (output, h_n)."""
        input, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch_dim = \
            self._unpack_input(input)
        if batch_sizes is None:
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
        else:
            max_batch_size = int(batch_sizes[0])
        if hx is None:
            hx = self._zeros(input, max_batch_size, self.hidden_size)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        output, (hidden,) = self._forward(input, (hx,), batch_sizes)
        if batch_sizes is not None:
            return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh) (relu with
    nonlinearity='relu'), stacked num_layers deep."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_hidden(input, hx)


class LSTM(RNNBase):
    """A long short-term memory RNN: gates i, f, g, o from x_t and h_(t-1);
    c_t = f c_(t-1) + i g, h_t = o tanh(c_t), projected by weight_hr when proj_size > 0.
    Returns (output, (h_n, c_n))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        input, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch_dim = \
            self._unpack_input(input)
        if batch_sizes is None:
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
        else:
            max_batch_size = int(batch_sizes[0])
        if hx is None:
            real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, max_batch_size, real_hidden_size),
                  self._zeros(input, max_batch_size, self.hidden_size))
        else:
            if batch_sizes is None:
                if is_batched:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D "
                                           f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                else:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be "
                                           f"2-D but got ({hx[0].dim()}-D, {hx[1].dim()}-D) "
                                           "tensors")
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._forward(input, tuple(hx), batch_sizes)
        if batch_sizes is not None:
            return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, self.permute_hidden(hidden, unsorted_indices)


class GRU(RNNBase):
    """A gated recurrent unit RNN: reset r, update z and new n gates;
    h_t = (1 - z) n + z h_(t-1)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_hidden(input, hx)


class RNNCellBase(Module):
    """The parameters of a one-step cell: weight_ih (chunks·hidden, input), weight_hh
    (chunks·hidden, hidden), bias_ih and bias_hh, drawn from U(-1/√hidden, 1/√hidden)."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(_factories.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_factories.empty((num_chunks * hidden_size, hidden_size),
                                                    **kw))
        if bias:
            self.bias_ih = Parameter(_factories.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_factories.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input):
        assert input.dim() in (1, 2), (f"{type(self).__name__}: Expected input to be 1-D or 2-D "
                                       f"but received {input.dim()}-D tensor")
        is_batched = input.dim() == 2
        return (input if is_batched else input.unsqueeze(0)), is_batched

    def _zeros(self, input):
        return _factories.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                device=input.device, session=input._session)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input)
        if hx is None:
            hx = self._zeros(input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            cell = F.rnn_tanh_cell
        elif self.nonlinearity == "relu":
            cell = F.rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        ret = F.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else (ret[0].squeeze(0), ret[1].squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from x and h."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input)
        if hx is None:
            hx = self._zeros(input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        ret = F.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
