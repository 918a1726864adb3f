"""A small GPT: token and position embeddings, blocks of LayerNorm, causal self-attention (by hand with a tril mask,
or F.scaled_dot_product_attention) and an MLP, with dropout; a few Adam steps, then greedy samples."""
PROGRAMS = []


def _model(T, vocab, n_embd, block, n_head, n_layer, dropout, sdpa):
    nn = T.nn
    F = T.nn.functional

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.proj = nn.Linear(n_embd, n_embd)
            self.drop = nn.Dropout(dropout)
            self.register_buffer("tril", T.tril(T.ones(block, block)))

        def forward(self, x):
            B, L, E = x.shape
            q, k, v = self.qkv(x).split(n_embd, dim=2)
            q = q.view(B, L, n_head, E // n_head).transpose(1, 2)
            k = k.view(B, L, n_head, E // n_head).transpose(1, 2)
            v = v.view(B, L, n_head, E // n_head).transpose(1, 2)
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout if self.training else 0.0,
                                                   is_causal=True)
            else:
                w = q @ k.transpose(-2, -1) * (E // n_head) ** -0.5
                w = w.masked_fill(self.tril[:L, :L] == 0, float("-inf"))
                w = self.drop(F.softmax(w, dim=-1))
                y = w @ v
            y = y.transpose(1, 2).contiguous().view(B, L, E)
            return self.drop(self.proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(n_embd)
            self.attn = Head()
            self.ln2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                     nn.Dropout(dropout))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, n_embd)
            self.pos = nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets=None):
            B, L = idx.shape
            x = self.tok(idx) + self.pos(T.arange(L))
            logits = self.head(self.ln_f(self.blocks(x)))
            loss = None if targets is None else F.cross_entropy(logits.view(B * L, -1), targets.view(B * L))
            return logits, loss
    return GPT()


def _make(seed, vocab=12, n_embd=16, block=8, n_head=2, n_layer=1, dropout=0.1, sdpa=False, steps=3, batch=4):
    def prog(T):
        T.manual_seed(seed)
        model = _model(T, vocab, n_embd, block, n_head, n_layer, dropout, sdpa)
        print(sum(p.numel() for p in model.parameters()))
        data = T.randint(0, vocab, (200,))
        opt = T.optim.Adam(model.parameters(), lr=1e-2)
        for step in range(steps):
            ix = T.randint(0, len(data) - block, (batch,))
            xb = T.stack([data[i:i + block] for i in ix.tolist()])
            yb = T.stack([data[i + 1:i + block + 1] for i in ix.tolist()])
            _, loss = model(xb, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            print(step, loss)
        print(model.blocks[0].ln1.weight.grad[:4])
        print(model.tok.weight.grad.abs().sum())
        print(loss.grad_fn.name(), model.blocks[0].ln1(T.zeros(1, 1, n_embd)).grad_fn.name())
        model.eval()
        with T.no_grad():
            idx = T.zeros((1, 1), dtype=T.long)
            for _ in range(6):
                logits, _ = model(idx[:, -block:])
                idx = T.cat((idx, logits[:, -1, :].argmax(-1, keepdim=True)), dim=1)
        print(idx.tolist())
        print(model.blocks[0].ln1, model.tok)
    prog.__name__ = f"gpt_{seed}_{'sdpa' if sdpa else 'hand'}_L{n_layer}_p{dropout}"
    PROGRAMS.append(prog)


_make(1)
_make(2, sdpa=True)
_make(3, dropout=0.0, sdpa=True)
_make(4, n_layer=2, dropout=0.0)
_make(5, n_layer=2, sdpa=True, dropout=0.2)
_make(6, n_head=4, n_embd=16, block=6)
_make(7, sdpa=True, n_head=1, dropout=0.0, steps=4)
_make(8, vocab=20, n_embd=8, block=4, batch=8)
