"""Small real models written once for both engines (``lib`` is ``torch`` or ``autogradviz``), without torchvision."""


def lenet(lib, width=6):
    """A LeNet-5 for 1x28x28 images; ``width`` is the first conv's channel count (6 in LeCun's)."""
    nn = lib.nn
    F = nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, width, 5, padding=2)
            self.conv2 = nn.Conv2d(width, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)
    return LeNet()


def copy_weights(src, dst, lib):
    """Give ``dst`` (a model of ``lib``) the parameters and buffers of ``src`` (the same model in the other engine)."""
    import numpy as np
    state = {k: lib.tensor(np.array(v.detach().numpy() if hasattr(v, "detach") else v, copy=True))
             for k, v in src.state_dict().items()}
    dst.load_state_dict(state)
    return dst
