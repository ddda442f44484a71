// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Multicall
/// @notice Batches many contract reads into one `eth_call`. `aggregate3` has the signature of Multicall3's, so viem's
///         `multicall` action uses this contract when given its address (`multicallAddress`, or a chain's
///         `contracts.multicall3`).
/// @dev Read-only on purpose: calls are made with STATICCALL, so this contract can never be used to change state on
///      a caller's behalf. It is deployed where no Multicall3 exists (the local anvil network).
contract Multicall {
    /// @notice One read: `callData` sent to `target`; when `allowFailure` is false, a failure reverts the batch.
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    /// @notice The outcome of one read: whether it succeeded, and its return (or revert) data.
    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Read `index`, which does not allow failure, reverted with `reason`.
    error CallFailed(uint256 index, bytes reason);

    /// @notice Makes each read in order and returns every outcome.
    function aggregate3(Call3[] calldata calls) external view returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call3 calldata c = calls[i];
            (bool success, bytes memory returnData) = c.target.staticcall(c.callData);
            if (!success && !c.allowFailure) revert CallFailed(i, returnData);
            results[i] = Result(success, returnData);
        }
    }

    /// @notice The ETH balance of `account`, so native balances can be read in the same batch as token balances.
    function getEthBalance(address account) external view returns (uint256) {
        return account.balance;
    }
}
