"""A script for `python -m layoutprof`: a DataLoader with worker processes whose dataset calls
a module of its own (an implicit copy in each worker), and a model whose forward() starts a
thread that makes 20 explicit copies while the model runs. The parent alone records and
reports; the workers' ops are not in its report, the thread's are, outside the model's rows.
"""
import threading

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Flatten(nn.Module):
    def forward(self, x):
        return x.t().reshape(-1)  # transpose then reshape: an implicit copy


class Data(Dataset):
    def __init__(self):
        self.flatten = Flatten()

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.flatten(torch.randn(4, 4))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        def side():
            for _ in range(20):
                torch.randn(64, 64).t().contiguous()

        thread = threading.Thread(target=side)
        thread.start()
        y = self.fc(x)
        thread.join()
        return y


if __name__ == "__main__":
    net = Net().eval()
    loader = DataLoader(Data(), batch_size=2, num_workers=2)
    with torch.no_grad():
        for x in loader:
            net(x)
