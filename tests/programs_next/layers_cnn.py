"""LeNet and a ResNet block on random images: Conv2d, BatchNorm2d, pooling, a few SGD steps."""
PROGRAMS = []


def _lenet(T, pool, act, pad):
    nn = T.nn
    P = nn.MaxPool2d(2) if pool == "max" else nn.AvgPool2d(2)
    A = nn.ReLU() if act == "relu" else nn.Tanh()
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=pad), A, P, nn.Conv2d(6, 16, 5), A, P, nn.Flatten(),
                         nn.Linear(16 * 4 * 4 if pad == 0 else 16 * 5 * 5, 32), A, nn.Linear(32, 10))


def _resblock(T, c, stride):
    nn = T.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(c, 2 * c if stride == 2 else c, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(self.conv1.out_channels)
            self.conv2 = nn.Conv2d(self.conv1.out_channels, self.conv1.out_channels, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(self.conv1.out_channels)
            self.short = nn.Sequential()
            if stride != 1:
                self.short = nn.Sequential(nn.Conv2d(c, 2 * c, 1, stride=stride, bias=False), nn.BatchNorm2d(2 * c))

        def forward(self, x):
            out = T.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return T.relu(out + self.short(x))

    return nn.Sequential(nn.Conv2d(3, c, 3, padding=1), Block(), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                         nn.Linear(2 * c if stride == 2 else c, 5))


def _make(seed, kind="lenet", pool="max", act="relu", pad=0, c=4, stride=1, batch=8, steps=3, lr=0.05):
    def prog(T):
        T.manual_seed(seed)
        if kind == "lenet":
            net = _lenet(T, pool, act, pad)
            x = T.randn(batch, 1, 28, 28)
            y = T.randint(0, 10, (batch,))
        else:
            net = _resblock(T, c, stride)
            x = T.randn(batch, 3, 8, 8)
            y = T.randint(0, 5, (batch,))
        print(net)
        opt = T.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
        for step in range(steps):
            out = net(x)
            loss = T.nn.functional.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(step, loss)
        first = net[0]
        print(first.weight.grad.shape, first.weight.grad.abs().sum())
        print(first.bias.grad[:3])
        print(out.grad_fn.name(), net[0](x[:1]).grad_fn.name())
        net.eval()
        with T.no_grad():
            print(net(x[:3]).argmax(1))
        if kind == "res":
            bn = net[1].bn1
            print(bn.running_mean[:3], bn.num_batches_tracked)
    prog.__name__ = f"cnn_{seed}_{kind}_{pool}_{act}_p{pad}_s{stride}"
    PROGRAMS.append(prog)


_make(1)
_make(2, pool="avg", act="tanh")
_make(3, pad=2, batch=4)
_make(4, pool="avg", pad=2, steps=2)
_make(5, kind="res")
_make(6, kind="res", stride=2)
_make(7, kind="res", c=8, batch=4)
_make(8, kind="res", stride=2, c=2, steps=4)
