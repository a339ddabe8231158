"""A small spiking classifier: Poisson-encoded features, one LIF layer, a leaky-integrator readout."""
import torch
import norse.torch as norse


class SpikingClassifier(torch.nn.Module):
    def __init__(self, in_features: int = 16, hidden: int = 32, classes: int = 4,
                 steps: int = 8, f_max: float = 200.0):
        super().__init__()
        self.steps = steps
        self.encoder = norse.PoissonEncoder(seq_length=steps, f_max=f_max)
        self.fc_in = torch.nn.Linear(in_features, hidden)
        self.lif = norse.LIFCell()
        self.fc_out = torch.nn.Linear(hidden, classes)
        self.readout = norse.LICell()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spikes = self.encoder(x)  # [steps, batch, in_features]
        s1 = s2 = None
        vmax = None
        for t in range(self.steps):
            z, s1 = self.lif(self.fc_in(spikes[t]), s1)
            v, s2 = self.readout(self.fc_out(z), s2)
            vmax = v if vmax is None else torch.maximum(vmax, v)
        return vmax
